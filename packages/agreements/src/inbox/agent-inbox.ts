import { randomBytes } from "node:crypto";
import { MESSAGE_CONTEXT, MESSAGE_PROFILE } from "../constants.js";
import type { MailAuthOptions } from "../email/authenticate.js";
import { type ReceivedMail, receiveAgreementMail } from "../email/receive.js";
import type { SigningKey } from "../jws/keys.js";
import type { KeyResolver } from "../jws/resolver.js";
import { signMessage } from "../jws/sign.js";
import { newId, newNonce } from "../message/ids.js";
import type { ActingFor, AgentInfo, Authority, Message, MessageType } from "../message/types.js";
import { createRecord } from "../record/build.js";
import type { AgreementRecord } from "../record/types.js";
import { InboxError } from "./errors.js";
import { decideByLimits, isBlocked, type LimitsPolicy } from "./limits.js";
import type { Outlet } from "./outlet.js";
import { checkReceivedMessage, type ReceiverVerdict } from "./receiver-checks.js";
import type { ReceivedEnvelope } from "./smtp.js";
import type { Channel, InboxStore, PendingAnswer, StoredMessage, ThreadState } from "./store.js";

/**
 * One agent's inbox, over e-mail and A2A: every incoming message goes through the receiver checks;
 * a message that passes is kept in its thread and handed to the agent's responder; the answer is
 * sent on the limits' authority when it is within them, and otherwise waits for the owner, who
 * approves (`decided_by: owner`) or refuses it. A mail that fails the checks is handed on as plain
 * mail. Each thread stays on the channel it started on; an outlet per channel carries what leaves.
 */

/** What the agent wants to say: the type and its own members. The inbox adds the envelope. */
export type Draft = { readonly type: MessageType; readonly exp?: number } & Readonly<Record<string, unknown>>;

export interface AnswerContext {
  readonly message: Message;
  readonly verdict: ReceiverVerdict;
  readonly thread: readonly StoredMessage[];
  /** Unix seconds. */
  readonly now: number;
}

export type Responder = (context: AnswerContext) => Promise<Draft | undefined>;

export interface AgentInboxOptions {
  readonly address: string;
  readonly name?: string;
  readonly party?: string;
  readonly actingFor: ActingFor;
  readonly agent: AgentInfo;
  readonly store: InboxStore;
  readonly signingKey: SigningKey;
  readonly jku: string;
  /** How messages leave, per channel (`emailOutlet`; A2A connects itself with `attachA2A`). */
  readonly outlets?: Partial<Record<Channel, Outlet>>;
  readonly resolveKey: KeyResolver;
  readonly respond: Responder;
  readonly mailAuth?: MailAuthOptions;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  /** Default lifetime of a message the agent sends, seconds (default 86400). */
  readonly defaultTtlSeconds?: number;
  /** A mail that failed the checks: it stays a normal e-mail for a person. */
  readonly onPlainMail?: (mail: ReceivedMail) => void | Promise<void>;
  /** An answer now waits for the owner. */
  readonly onWaiting?: (pending: PendingAnswer) => void | Promise<void>;
  /** A thread reached a new state. */
  readonly onState?: (thread: string, state: ThreadState) => void | Promise<void>;
  /** A checked message the lifecycle refuses (a late or superseded accept). */
  readonly onRefused?: (message: Message, reason: string) => void | Promise<void>;
}

export interface SentMessage {
  readonly message: Message;
  readonly jws: string;
  readonly hash: string;
  readonly record?: AgreementRecord;
}

/** What became of a message received over a channel. */
export interface Taken {
  readonly verdict: ReceiverVerdict;
  /** Whether the message was kept in its thread and acted on. */
  readonly acted: boolean;
  /** Why a message was not acted on, in plain words. */
  readonly reason?: string;
}

/** Where a thread starts: its channel (default e-mail) and, for A2A, the thread id bound beforehand. */
export interface StartOptions {
  readonly channel?: Channel;
  readonly thread?: string;
}

/** Why our lifecycle refuses an accept. */
interface OfferRefusal {
  readonly kind: "unknown" | "expired" | "replaced" | "not_open";
  readonly reason: string;
}

const STATE_AFTER_SENDING: Partial<Record<MessageType, ThreadState>> = {
  ask_quote: "input_required",
  quote: "input_required",
  propose_times: "input_required",
  accept: "agreed",
  decline: "declined",
  cancel: "cancelled",
};

const STATE_AFTER_RECEIVING: Partial<Record<MessageType, ThreadState>> = {
  ask_quote: "working",
  quote: "working",
  propose_times: "working",
  accept: "agreed",
  decline: "declined",
  cancel: "cancelled",
};

const ENDED: ReadonlySet<ThreadState> = new Set(["agreed", "declined", "cancelled", "expired", "refused"]);

export class AgentInbox {
  readonly address: string;
  readonly #o: AgentInboxOptions;
  readonly #clock: () => number;
  readonly #outlets: Partial<Record<Channel, Outlet>>;

  constructor(options: AgentInboxOptions) {
    this.address = options.address.toLowerCase();
    this.#o = options;
    this.#clock = options.clock ?? Date.now;
    this.#outlets = { ...options.outlets };
  }

  /** Connects the outlet of a channel (A2A does so in `attachA2A`, which needs the inbox first). */
  connect(channel: Channel, outlet: Outlet): void {
    if (this.#outlets[channel] !== undefined) {
      throw new RangeError(`the inbox ${this.address} already has an outlet for ${channel}`);
    }
    this.#outlets[channel] = outlet;
  }

  #outlet(channel: Channel): Outlet {
    const outlet = this.#outlets[channel];
    if (outlet === undefined) {
      throw new InboxError("ERR_NO_OUTLET", `the inbox ${this.address} has no outlet for ${channel}`);
    }
    return outlet;
  }

  #now(): number {
    return Math.floor(this.#clock() / 1000);
  }

  async #policy(): Promise<LimitsPolicy> {
    const row = await this.#o.store.getInbox(this.address);
    if (row === undefined) {
      throw new InboxError("ERR_INBOX_UNKNOWN", `the inbox ${this.address} does not exist (or expired)`);
    }
    return row.policy;
  }

  /** The channel that carries a thread: the one it started on, else `fallback`. */
  async #channelOf(thread: string, fallback: Channel): Promise<Channel> {
    return (await this.#o.store.threadState(this.address, thread))?.channel ?? fallback;
  }

  /** Builds a complete message from a draft, answering `answering` when given. */
  async complete(draft: Draft, to: string, answering?: StoredMessage, thread?: string): Promise<Message> {
    const now = this.#now();
    const { exp, ...body } = draft;
    return {
      "@context": [...MESSAGE_CONTEXT],
      profile: MESSAGE_PROFILE,
      id: newId(),
      thread: answering?.thread ?? thread ?? newId(),
      ...(answering === undefined ? {} : { in_reply_to: answering.id, prev: answering.hash }),
      from: {
        ...(this.#o.party === undefined ? {} : { party: this.#o.party }),
        address: this.address,
        ...(this.#o.name === undefined ? {} : { name: this.#o.name }),
      },
      to: { address: to },
      nonce: newNonce(randomBytes),
      iat: now,
      exp: exp ?? now + (this.#o.defaultTtlSeconds ?? 86_400),
      acting_for: this.#o.actingFor,
      agent: this.#o.agent,
      ...body,
    } as unknown as Message;
  }

  /**
   * Signs a message, keeps it in its thread and sends it on the thread's channel (`channel` only
   * chooses for a new thread). An accept carries the record this side seals.
   */
  async sendMessage(
    message: Message,
    authority: Authority,
    channel: Channel = "email",
  ): Promise<SentMessage> {
    const withAuthority = { ...message, authority } as Message;
    if (withAuthority.type === "accept") {
      const refusal = await this.#offerRefusal(withAuthority.ref, withAuthority.iat, "in");
      if (refusal !== undefined) throw new InboxError("ERR_OFFER_REFUSED", refusal.reason);
    }
    const via = await this.#channelOf(withAuthority.thread, channel);
    const outlet = this.#outlet(via);
    const signed = await signMessage(withAuthority, this.#o.signingKey, { jku: this.#o.jku });
    const m = signed.parsed.message;
    const outgoing: StoredMessage = {
      inbox: this.address,
      id: m.id,
      thread: m.thread,
      direction: "out",
      type: m.type,
      hash: signed.parsed.hash,
      canonical: signed.parsed.canonical,
      jws: signed.jws,
      result: "sent",
      at: this.#clock(),
    };
    const record = m.type === "accept" ? await this.#recordFor(m.ref, outgoing) : undefined;
    // Kept before it leaves: the answer may come back before the send returns.
    await this.#o.store.saveMessage(outgoing);
    if (record !== undefined) await this.#o.store.saveRecord(this.address, m.thread, record);
    const state = STATE_AFTER_SENDING[m.type] ?? "working";
    await this.#setState(m.thread, state, via, false);
    const sent: SentMessage = {
      message: m,
      jws: signed.jws,
      hash: signed.parsed.hash,
      ...(record === undefined ? {} : { record }),
    };
    await outlet.deliver(sent, state);
    return sent;
  }

  /** The record this side seals when the offer `offerId` is accepted by `acceptance`. */
  async #recordFor(offerId: string, acceptance: StoredMessage): Promise<AgreementRecord> {
    const offer = await this.#o.store.message(this.address, offerId);
    if (offer === undefined || offer.jws === null) {
      throw new InboxError("ERR_OFFER_NOT_HELD", `the offer ${offerId} is not held as signed`);
    }
    const held = await this.#o.store.thread(this.address, acceptance.thread);
    const chain = [...held.filter((h) => h.id !== acceptance.id), acceptance].map((h) => h.hash);
    // The other side's message counts as a signature only when it was signed and checked.
    const theirs = offer.direction === "in" ? offer : acceptance;
    return createRecord(
      {
        kind: theirs.result === "signed_and_checked" ? "two_signatures" : "our_signature",
        offer: offer.jws,
        ...(acceptance.jws === null ? {} : { acceptance: acceptance.jws }),
        chain,
        offerCurrent: !held.some(
          (h) => (JSON.parse(h.canonical) as { replaces?: string }).replaces === offerId,
        ),
      },
      { key: this.#o.signingKey, jku: this.#o.jku, now: this.#now() },
    );
  }

  /** The record this inbox holds for a thread. */
  record(thread: string): Promise<unknown | undefined> {
    return this.#o.store.record(this.address, thread);
  }

  /** Why the lifecycle refuses an accept of `offerId` signed at `iat`, or undefined when the offer is open. */
  async #offerRefusal(
    offerId: string,
    iat: number,
    offerDirection: "in" | "out",
  ): Promise<OfferRefusal | undefined> {
    const offer = await this.#o.store.message(this.address, offerId);
    if (
      offer === undefined ||
      offer.direction !== offerDirection ||
      (offer.type !== "quote" && offer.type !== "propose_times")
    ) {
      return { kind: "unknown", reason: "the accept names no open offer of this thread" };
    }
    const parsed = JSON.parse(offer.canonical) as Message;
    if (iat > parsed.exp) return { kind: "expired", reason: "the offer had expired when it was accepted" };
    const thread = await this.#o.store.thread(this.address, offer.thread);
    if (thread.some((h) => (JSON.parse(h.canonical) as { replaces?: string }).replaces === offer.id)) {
      return { kind: "replaced", reason: "the offer had been replaced when it was accepted" };
    }
    return undefined;
  }

  /** Why the lifecycle refuses an incoming accept of an offer this inbox sent. */
  async #refuseAccept(accept: Message & { type: "accept" }): Promise<OfferRefusal | undefined> {
    const refusal = await this.#offerRefusal(accept.ref, accept.iat, "out");
    if (refusal !== undefined) return refusal;
    const state = await this.#o.store.threadState(this.address, accept.thread);
    if (state !== undefined && state.state !== "input_required")
      return { kind: "not_open", reason: `the thread is ${state.state}, not open` };
    return undefined;
  }

  /** Starts a thread (e.g. an ask_quote), within the limits or waiting for the owner. */
  async start(
    draft: Draft,
    to: string,
    options: StartOptions = {},
  ): Promise<SentMessage | PendingAnswer | undefined> {
    const message = await this.complete(draft, to, undefined, options.thread);
    return this.#answer(message, options.channel ?? "email");
  }

  /** Sets a thread's state; `announce` also tells the channel (not when a message of ours carries it). */
  async #setState(thread: string, state: ThreadState, channel: Channel, announce: boolean): Promise<void> {
    await this.#o.store.setThreadState(this.address, thread, state, channel, this.#clock());
    await this.#o.onState?.(thread, state);
    if (announce) await this.#outlets[channel]?.stateChanged?.(thread, state);
  }

  async #answer(message: Message, channel: Channel): Promise<SentMessage | PendingAnswer | undefined> {
    const policy = await this.#policy();
    const accepted =
      message.type === "accept" ? await this.#o.store.message(this.address, message.ref) : undefined;
    const decision = decideByLimits(
      policy,
      message,
      accepted === undefined ? undefined : (JSON.parse(accepted.canonical) as Message),
    );
    if (decision.within) {
      if (message.type === "accept") {
        const refusal = await this.#offerRefusal(message.ref, message.iat, "in");
        if (refusal !== undefined) {
          await this.#o.onRefused?.(message, refusal.reason);
          return undefined;
        }
      }
      return this.sendMessage(message, decision.authority, channel);
    }
    const via = await this.#channelOf(message.thread, channel);
    const pending: PendingAnswer = {
      inbox: this.address,
      id: message.id,
      thread: message.thread,
      channel: via,
      draft: message,
      reasons: decision.reasons,
      createdAt: this.#clock(),
    };
    await this.#o.store.addPending(pending);
    await this.#setState(message.thread, "waiting_for_owner", via, true);
    await this.#o.onWaiting?.(pending);
    return pending;
  }

  /**
   * The other agent ended the thread's task without an agreement message (A2A `rejected`, or
   * `canceled`/`failed` with only a status text): the thread ends here too, unless it already ended.
   */
  async endedByPeer(thread: string, state: "refused" | "cancelled"): Promise<void> {
    const held = await this.#o.store.threadState(this.address, thread);
    if (held === undefined || ENDED.has(held.state)) return;
    await this.#setState(thread, state, held.channel, false);
  }

  /** What waits for the owner. */
  pending(): Promise<PendingAnswer[]> {
    return this.#o.store.pending(this.address);
  }

  async #takePending(id: string): Promise<PendingAnswer> {
    const pending = await this.#o.store.takePending(this.address, id);
    if (pending === undefined) {
      throw new InboxError("ERR_NOTHING_PENDING", `nothing waits for the owner under ${id}`);
    }
    return pending;
  }

  /** The owner approves a waiting answer: it is sent on the owner's authority. */
  async approve(id: string): Promise<SentMessage> {
    const pending = await this.#takePending(id);
    const draft = pending.draft as Message;
    // Times are set again: the owner's decision is when the message is signed.
    const now = this.#now();
    const message = { ...draft, iat: now, exp: Math.max(draft.exp - draft.iat + now, now + 1) } as Message;
    return this.sendMessage(message, { decided_by: "owner" }, pending.channel);
  }

  /** The owner refuses a waiting answer: nothing is sent, and an offer received is declined. */
  async refuse(id: string, note?: string): Promise<SentMessage | undefined> {
    const pending = await this.#takePending(id);
    const draft = pending.draft as Message;
    const answering =
      draft.in_reply_to === undefined
        ? undefined
        : await this.#o.store.message(this.address, draft.in_reply_to);
    if (answering === undefined || answering.direction !== "in") {
      await this.#setState(draft.thread, "declined", pending.channel, true);
      return undefined;
    }
    const decline = await this.complete(
      { type: "decline", ref: answering.id, reason: "other", ...(note === undefined ? {} : { note }) },
      draft.to.address,
      answering,
    );
    return this.sendMessage(decline, { decided_by: "owner" }, pending.channel);
  }

  /** One mail from the SMTP server: checks, thread, answer. */
  async receive(envelope: ReceivedEnvelope): Promise<ReceivedMail> {
    const received = await receiveAgreementMail(envelope.raw, {
      inbox: this.address,
      state: this.#o.store.receiverState(this.address),
      resolveKey: this.#o.resolveKey,
      now: this.#now(),
      mailAuth: {
        ip: envelope.remoteAddress,
        helo: envelope.helo,
        ...(envelope.mailFrom === undefined ? {} : { sender: envelope.mailFrom }),
        ...this.#o.mailAuth,
      },
    });
    if (received.verdict.result === "could_not_check" || received.verdict.parsed === undefined) {
      await this.#o.onPlainMail?.(received);
      return received;
    }
    await this.#take(received.verdict, "email");
    return received;
  }

  /**
   * One agreement message received over A2A (the DataPart's `message` and `jws`): the receiver
   * checks with no mail check, so only a signed and checked message is acted on. `admit` runs once
   * the checks passed and before anything is kept; it ties the thread to its task, or says why not.
   */
  async receiveA2A(
    part: { readonly value: unknown; readonly jws?: string | undefined },
    admit?: (message: Message) => Promise<string | undefined>,
  ): Promise<Taken> {
    const verdict = await checkReceivedMessage({
      transport: { kind: "a2a" },
      inbox: this.address,
      part: { value: part.value },
      jws: part.jws,
      state: this.#o.store.receiverState(this.address),
      resolveKey: this.#o.resolveKey,
      now: this.#now(),
    });
    if (verdict.result !== "signed_and_checked" || verdict.parsed === undefined) {
      return { verdict, acted: false, reason: verdict.reason ?? "the message could not be checked" };
    }
    const refusal = await admit?.(verdict.parsed.message);
    if (refusal !== undefined) return { verdict, acted: false, reason: refusal };
    return this.#take(verdict, "a2a");
  }

  /** A message that passed the receiver checks: lifecycle, thread, limits, record, answer. */
  async #take(verdict: ReceiverVerdict, channel: Channel): Promise<Taken> {
    const parsed = verdict.parsed;
    if (parsed === undefined) return { verdict, acted: false, reason: "the message could not be read" };
    const message = parsed.message;
    const held = await this.#o.store.threadState(this.address, message.thread);
    if (held !== undefined && held.channel !== channel) {
      const reason = `the thread is carried by ${held.channel}; a thread never switches channel`;
      await this.#o.onRefused?.(message, reason);
      return { verdict, acted: false, reason };
    }
    if (message.type === "accept") {
      const refusal = await this.#refuseAccept(message);
      if (refusal !== undefined) {
        if (refusal.kind === "expired") await this.#setState(message.thread, "expired", channel, false);
        await this.#o.onRefused?.(message, refusal.reason);
        return { verdict, acted: false, reason: refusal.reason };
      }
    }
    await this.#o.store.saveMessage({
      inbox: this.address,
      id: message.id,
      thread: message.thread,
      direction: "in",
      type: message.type,
      hash: parsed.hash,
      canonical: parsed.canonical,
      jws: verdict.jws ?? null,
      result: verdict.result,
      at: this.#clock(),
    });
    const policy = await this.#policy();
    if (isBlocked(policy, message.from.address)) {
      await this.#setState(message.thread, "refused", channel, false);
      return { verdict, acted: false, reason: `the owner's limits block ${message.from.address}` };
    }
    if (message.type === "accept" && verdict.jws !== undefined) {
      const acceptance = await this.#o.store.message(this.address, message.id);
      if (acceptance !== undefined) {
        await this.#o.store.saveRecord(
          this.address,
          message.thread,
          await this.#recordFor(message.ref, acceptance),
        );
      }
    }
    const state = STATE_AFTER_RECEIVING[message.type];
    if (state !== undefined) await this.#setState(message.thread, state, channel, true);
    const stored = await this.#o.store.message(this.address, message.id);
    const thread = await this.#o.store.thread(this.address, message.thread);
    const draft = await this.#o.respond({ message, verdict, thread, now: this.#now() });
    if (draft !== undefined && stored !== undefined) {
      await this.#answer(await this.complete(draft, message.from.address, stored), channel);
    }
    return { verdict, acted: true };
  }
}
