import { AgreementError } from "../errors.js";
import type { ParsedMessage } from "../message/parse.js";
import type { Accept, AskQuote, Message, Offer } from "../message/types.js";

/** "An offer is open, then agreed, declined, cancelled, expired or replaced." */
export type OfferState = "open" | "agreed" | "declined" | "cancelled" | "expired" | "replaced";

export interface OfferEntry {
  readonly offer: Offer;
  readonly hash: string;
  /** The state before expiry is applied: expiry depends on the clock (see `stateOf`). */
  readonly settled: Exclude<OfferState, "open" | "expired"> | undefined;
  /** The message that settled it: the accept, decline, cancel or the replacing offer. */
  readonly settledBy?: string;
  readonly accept?: { readonly message: Accept; readonly hash: string };
}

/** What one message did to the thread. */
export type ThreadEvent =
  | { readonly kind: "asked"; readonly ask: AskQuote }
  | { readonly kind: "offered"; readonly offer: Offer; readonly replaced?: string }
  | { readonly kind: "agreed"; readonly offer: OfferEntry; readonly accept: Accept }
  | { readonly kind: "declined"; readonly ref: string }
  | { readonly kind: "cancelled"; readonly ref: string; readonly agreement: boolean };

/** "exp: … For an offer, exp is the time it stays open until": open through exp, expired after. */
export const isExpiredAt = (offer: Offer, unixSeconds: number): boolean => unixSeconds > offer.exp;

const refuse = (code: ConstructorParameters<typeof AgreementError>[0], message: string): never => {
  throw new AgreementError(code, message);
};

/**
 * One agreement thread, as either side sees it: every message sent or received goes through
 * `apply`, which refuses what the profile forbids (a late or superseded accept, an accept of an
 * ask, an answer whose prev is wrong, a third address) and otherwise moves the offers' states.
 * A refused message changes nothing.
 */
export class AgreementThread {
  readonly id: string;
  #parties: readonly [string, string] | undefined;
  readonly #messages = new Map<string, { message: Message; hash: string }>();
  readonly #offers = new Map<string, OfferEntry>();
  readonly #order: string[] = [];

  constructor(threadId: string) {
    this.id = threadId;
  }

  /** The state of an offer at a time (Unix seconds). */
  stateOf(offerId: string, unixSeconds: number): OfferState {
    const entry = this.#offers.get(offerId);
    if (!entry) return refuse("ERR_OFFER_UNKNOWN", `the thread has no offer ${offerId}`);
    if (entry.settled) return entry.settled;
    return isExpiredAt(entry.offer, unixSeconds) ? "expired" : "open";
  }

  offer(offerId: string): OfferEntry | undefined {
    return this.#offers.get(offerId);
  }

  /** The hashes of every message applied, in order: a record's chain. */
  chain(): string[] {
    return this.#order.map((id) => this.#messages.get(id)?.hash as string);
  }

  /** Whether an offer has been replaced by a counter-offer. */
  isCurrent(offerId: string): boolean {
    return this.#offers.get(offerId)?.settled !== "replaced";
  }

  apply(parsed: ParsedMessage, unixSeconds: number): ThreadEvent {
    const { message, hash } = parsed;
    if (message.thread !== this.id) {
      refuse("ERR_THREAD_MISMATCH", `the message belongs to the thread ${message.thread}, not ${this.id}`);
    }
    if (this.#messages.has(message.id))
      refuse("ERR_DUPLICATE_MESSAGE", `the message ${message.id} was seen before`);
    this.#checkParties(message);
    this.#checkAnswer(message, hash);
    const event = this.#transition(message, hash, unixSeconds);
    if (!this.#parties)
      this.#parties = [message.from.address.toLowerCase(), message.to.address.toLowerCase()];
    this.#messages.set(message.id, { message, hash });
    this.#order.push(message.id);
    return event;
  }

  #checkParties(message: Message): void {
    if (!this.#parties) return;
    const from = message.from.address.toLowerCase();
    const to = message.to.address.toLowerCase();
    if (!this.#parties.includes(from)) {
      refuse("ERR_WRONG_SENDER", `${message.from.address} is not one of the two sides of this thread`);
    }
    if (!this.#parties.includes(to) || to === from) {
      refuse("ERR_WRONG_RECIPIENT", `${message.to.address} is not the other side of this thread`);
    }
  }

  #checkAnswer(message: Message, hash: string): void {
    // agent-intents/1: in_reply_to is "the id this message answers, if any" — a cancel, say, names
    // what it ends in ref and may answer nothing. (A message with prev but no in_reply_to does not
    // parse.)
    if (message.in_reply_to === undefined) return;
    const answered = this.#messages.get(message.in_reply_to);
    if (!answered)
      refuse("ERR_PREV_MISMATCH", `the message answers ${message.in_reply_to}, which is not in this thread`);
    if (answered && message.prev !== answered.hash) {
      refuse("ERR_PREV_MISMATCH", `prev is not the hash of the message it answers (${message.in_reply_to})`);
    }
    if (hash === answered?.hash) refuse("ERR_DUPLICATE_MESSAGE", "the message answers itself");
  }

  #openOffer(ref: string, unixSeconds: number, action: string): OfferEntry {
    const entry = this.#offers.get(ref);
    if (!entry) {
      const other = this.#messages.get(ref)?.message;
      return other?.type === "ask_quote"
        ? refuse("ERR_OFFER_UNKNOWN", `an ask_quote cannot be ${action}: it is answered with a quote`)
        : refuse("ERR_OFFER_UNKNOWN", `the thread has no offer ${ref} to be ${action}`);
    }
    if (entry.settled === "replaced") {
      refuse(
        "ERR_OFFER_REPLACED",
        `the offer ${ref} was replaced by ${entry.settledBy} and cannot be ${action}`,
      );
    }
    if (entry.settled) refuse("ERR_OFFER_NOT_OPEN", `the offer ${ref} is already ${entry.settled}`);
    if (isExpiredAt(entry.offer, unixSeconds)) {
      refuse(
        "ERR_OFFER_EXPIRED",
        `the offer ${ref} expired at ${new Date(entry.offer.exp * 1000).toISOString()}`,
      );
    }
    return entry;
  }

  #transition(message: Message, hash: string, now: number): ThreadEvent {
    switch (message.type) {
      case "ask_quote":
        return { kind: "asked", ask: message };
      case "quote":
      case "propose_times": {
        let replaced: string | undefined;
        if (message.replaces !== undefined) {
          const old = this.#openOffer(message.replaces, Math.min(now, message.iat), "replaced");
          replaced = old.offer.id;
          this.#offers.set(replaced, { ...old, settled: "replaced", settledBy: message.id });
        }
        this.#offers.set(message.id, { offer: message, hash, settled: undefined });
        return { kind: "offered", offer: message, ...(replaced ? { replaced } : {}) };
      }
      case "accept": {
        const entry = this.#openOffer(message.ref, now, "accepted");
        const { offer } = entry;
        if (message.from.address.toLowerCase() !== offer.to.address.toLowerCase()) {
          refuse("ERR_WRONG_SENDER", "only the receiver of an offer can accept it");
        }
        if (message.to.address.toLowerCase() !== offer.from.address.toLowerCase()) {
          refuse("ERR_WRONG_RECIPIENT", "an accept must be addressed to the sender of the offer");
        }
        if (message.iat > offer.exp)
          refuse("ERR_OFFER_EXPIRED", "the accept was issued after the offer expired");
        if (offer.type === "propose_times") {
          if (message.slot === undefined || message.slot >= offer.slots.length) {
            refuse(
              "ERR_SLOT_INVALID",
              `accepting times needs slot, the index of one of the ${offer.slots.length} offered slots (from 0)`,
            );
          }
        } else if (message.slot !== undefined) {
          refuse("ERR_SLOT_INVALID", "a quote is accepted without a slot");
        }
        const agreed: OfferEntry = {
          ...entry,
          settled: "agreed",
          settledBy: message.id,
          accept: { message, hash },
        };
        this.#offers.set(offer.id, agreed);
        return { kind: "agreed", offer: agreed, accept: message };
      }
      case "decline": {
        const ask = this.#messages.get(message.ref)?.message;
        if (ask?.type === "ask_quote") {
          if (message.from.address.toLowerCase() !== ask.to.address.toLowerCase()) {
            refuse("ERR_WRONG_SENDER", "only the receiver of an ask can decline it");
          }
          return { kind: "declined", ref: message.ref };
        }
        const entry = this.#openOffer(message.ref, now, "declined");
        if (message.from.address.toLowerCase() !== entry.offer.to.address.toLowerCase()) {
          refuse("ERR_WRONG_SENDER", "only the receiver of an offer can decline it");
        }
        this.#offers.set(entry.offer.id, { ...entry, settled: "declined", settledBy: message.id });
        return { kind: "declined", ref: message.ref };
      }
      case "cancel": {
        const byAccept = [...this.#offers.values()].find((e) => e.accept?.message.id === message.ref);
        const entry = byAccept ?? this.#offers.get(message.ref);
        if (!entry)
          return refuse("ERR_OFFER_UNKNOWN", `the thread has no offer or agreement ${message.ref} to cancel`);
        if (entry.settled === "agreed") {
          this.#offers.set(entry.offer.id, { ...entry, settled: "cancelled", settledBy: message.id });
          return { kind: "cancelled", ref: message.ref, agreement: true };
        }
        const open = this.#openOffer(entry.offer.id, now, "cancelled");
        if (message.from.address.toLowerCase() !== open.offer.from.address.toLowerCase()) {
          refuse("ERR_WRONG_SENDER", "only the sender of an open offer can cancel it");
        }
        this.#offers.set(open.offer.id, { ...open, settled: "cancelled", settledBy: message.id });
        return { kind: "cancelled", ref: message.ref, agreement: false };
      }
    }
  }
}
