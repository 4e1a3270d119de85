/**
 * The push profile 0.4 on the holder (§4, §6 rules 3, 6, 7, 9): subscriptions made with an
 * intentCode, the person's approval (a separate choice on the consent page, or a link sent to the
 * verified channel), revocation, and the doorbells themselves, queued through the delivery engine
 * in the same transaction as the change they announce.
 *
 * The delivery engine owns the endpoint, the secret (both sealed), the challenge, retries,
 * coalescing and the lease; this service owns what the holder adds: which intent a subscription
 * belongs to, how the person approves it, and what the pages show. Nothing here returns a url, a
 * secret or a code; the hosts the person is shown are sealed at rest.
 */
import {
  type DeliveryEngine,
  DeliveryError,
  type DeliveryTables,
  type SubscriptionView,
} from "@doorbell/delivery";
import type { Kysely } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import {
  effectiveStatus,
  manageUrl,
  newPageToken,
  openContact,
  PAGE_TOKEN,
  sendQuietly,
} from "../domain/intents.js";
import { HolderError, type IntentStatus, type Principal } from "../domain/types.js";
import { notificationApprovalMail } from "../mail/templates.js";
import { countFor, type FoundMatches } from "../matching/service.js";
import type { HolderTables } from "../schema.js";
import { checkedDoorbell, PUSH_EVENTS, type PushEvent } from "./doorbells.js";
import type { Approval, PushRow, PushTables } from "./schema.js";

type Tables = HolderTables & PushTables & DeliveryTables;
type Db = Kysely<Tables>;
/** The engine's view of the same connection or transaction (Kysely's table types are invariant). */
const d = (db: Db): Kysely<DeliveryTables> => db as unknown as Kysely<DeliveryTables>;

const DAY_MS = 24 * 60 * 60 * 1000;
const STATUS_EVENT = "intent.status.changed";
const MATCHES_EVENT = "intent.matches.delivered";
/** A host name as relayFor carries it (§7 rule 3): at most 253 characters, LDH labels. */
const HOST_NAME =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

export type PushStatus = "awaiting_verification" | "awaiting_person_approval" | "active" | "ended";

/** The §9 answer of intent_subscribe_events and intent_unsubscribe_events. */
export interface PushSubscriptionView {
  specVersion: "0.4";
  type: "push-subscription";
  subscriptionId: string;
  status: PushStatus;
  approval?: Approval;
  events: PushEvent[];
  expiresAt: string;
  refreshBefore: string;
  endedReason?: string;
}

export interface SubscribeRequest {
  delivery: { url: string; secret: string };
  events?: readonly PushEvent[];
  /** Through a forwarder: the host of the agent's own endpoint (§7 rule 3). */
  relayFor?: string;
  /** A test call (`x-isto-test: 1`, §6 rule 9): verified, never waits for the person, short lease. */
  test?: boolean;
}

/** One subscription as the person sees it on the manage and approval pages (open question 5). */
export interface NotificationReceipt {
  id: string;
  status: PushStatus;
  approval: Approval;
  deliveryHost: string;
  relayFor?: string;
  events: PushEvent[];
  createdAt: number;
  /** When the agent was last notified; null before the first doorbell. */
  lastNotifiedAt: number | null;
  /** Still listening: active, and deliveries are not failing. */
  listening: boolean;
  endedReason?: string;
}

export interface PushOptions {
  engine: DeliveryEngine;
  /** A lease of at most 30 days (§6 rule 7); shorter when the intent ends sooner. */
  leaseMs?: number;
  /** A test subscription's lease (rule 9: the holder SHOULD end it soon). Default 10 minutes. */
  testLeaseMs?: number;
  /** §6 rule 6: at most 3 subscriptions per intent; a holder may lower it. */
  maxPerIntent?: number;
}

export interface PushService {
  subscribe(principal: Principal, request: SubscribeRequest): Promise<PushSubscriptionView>;
  unsubscribe(principal: Principal, subscriptionId: string): Promise<PushSubscriptionView>;
  /** The subscription as its intentCode holder may see it (for the MCP resource). */
  view(principal: Principal, subscriptionId: string): Promise<PushSubscriptionView>;
  /** Inside the transaction that recorded matches: one matches doorbell per subscription. */
  enqueueMatches(trx: Kysely<HolderTables>, found: FoundMatches): Promise<void>;
  /** After an intent became active: settle consent-page choices, mail pending approval links. */
  onActivated(intentId: string): Promise<void>;
  /** After an intent ended: end every subscription to it (§4.2). */
  onIntentEnded(intentId: string, reason: "withdrawn" | "expired"): Promise<void>;
  /** Subscriptions the consent page offers as separate, unticked choices. */
  consentChoices(intentId: string): Promise<NotificationReceipt[]>;
  /** Records the ticked choices (consent page POST); the rest end at confirmation. */
  chooseOnConsent(intentId: string, chosenIds: readonly string[]): Promise<void>;
  /** The approval page behind the mailed link. */
  approvalView(token: string): Promise<{ intentId: string; statement: string; receipt: NotificationReceipt }>;
  approveByToken(token: string): Promise<NotificationReceipt>;
  /** The manage page: every subscription of the intent, ended ones until they are purged. */
  receipts(intentId: string): Promise<NotificationReceipt[]>;
  /** The person allows a subscription from the manage page (a page of the verified channel). */
  approve(intentId: string, subscriptionId: string): Promise<NotificationReceipt>;
  /** The person takes it back: ended at once, the agent told once (§6 rule 3). */
  revoke(intentId: string, subscriptionId: string): Promise<NotificationReceipt>;
  /** Ends subscriptions of intents that ended without a hook (drafts) and forgets purged ones. */
  sweep(): Promise<number>;
  /** Called with subscription ids when something changed for them (MCP resource updates). */
  onChange(listener: (subscriptionIds: readonly string[]) => void): () => void;
  /** The ids of live subscriptions of these intents (after a commit, for onChange). */
  changed(intentIds: readonly string[]): Promise<void>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function statusOf(sub: SubscriptionView): PushStatus {
  switch (sub.status) {
    case "pending_verification":
      return "awaiting_verification";
    case "awaiting_approval":
      return "awaiting_person_approval";
    default:
      return sub.status;
  }
}

function eventsOf(row: Pick<PushRow, "events_json">): PushEvent[] {
  return (JSON.parse(row.events_json) as string[]).filter((event): event is PushEvent =>
    (PUSH_EVENTS as readonly string[]).includes(event),
  );
}

/** The delivery url as the holder compares it for renewals: parsed and re-serialised. */
function normalisedUrl(url: string): string {
  try {
    return new URL(url).toString();
  } catch {
    throw new HolderError("ERR_HOLDER_INVALID", "delivery.url is not a URL");
  }
}

const hostsAad = (id: string): string => `holder.push.hosts:${id}`;

export function createPushService(ctx: HolderContext, options: PushOptions): PushService {
  const { engine } = options;
  const store = ctx.store as unknown as { db: Db; transaction<T>(fn: (trx: Db) => Promise<T>): Promise<T> };
  const leaseMs = Math.min(options.leaseMs ?? 30 * DAY_MS, 30 * DAY_MS);
  const testLeaseMs = options.testLeaseMs ?? 10 * 60_000;
  const maxPerIntent = Math.min(options.maxPerIntent ?? 3, 3);
  const listeners = new Set<(ids: readonly string[]) => void>();

  function intentIdOf(principal: Principal): string {
    if (principal.kind === "intent-code") return principal.intentId;
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      "notifications are subscribed with the intentCode (OAuth sign-in is not available yet)",
    );
  }

  function emit(ids: readonly string[]): void {
    if (ids.length === 0) return;
    for (const listener of listeners) {
      try {
        listener(ids);
      } catch {
        // A listener is a live MCP session: its failure never affects the holder.
      }
    }
  }

  function hostsOf(row: Pick<PushRow, "id" | "hosts_sealed">): { deliveryHost: string; relayFor?: string } {
    return JSON.parse(ctx.sealer.openText(row.hosts_sealed, hostsAad(row.id))) as {
      deliveryHost: string;
      relayFor?: string;
    };
  }

  function answer(
    row: Pick<PushRow, "approval" | "events_json">,
    sub: SubscriptionView,
  ): PushSubscriptionView {
    return {
      specVersion: "0.4",
      type: "push-subscription",
      subscriptionId: sub.id,
      status: statusOf(sub),
      approval: row.approval,
      events: eventsOf(row),
      expiresAt: iso(sub.expiresAt),
      refreshBefore: iso(sub.refreshBefore),
      ...(sub.status === "ended" && sub.endedReason !== null ? { endedReason: sub.endedReason } : {}),
    };
  }

  function receipt(row: PushRow, sub: SubscriptionView): NotificationReceipt {
    const hosts = hostsOf(row);
    return {
      id: row.id,
      status: statusOf(sub),
      approval: row.approval,
      deliveryHost: hosts.deliveryHost,
      ...(hosts.relayFor === undefined ? {} : { relayFor: hosts.relayFor }),
      events: eventsOf(row),
      createdAt: row.created_at,
      lastNotifiedAt: sub.deliveryStatus.lastDeliveryAt,
      listening:
        sub.status === "active" && sub.deliveryStatus.active && sub.deliveryStatus.failedSince === null,
      ...(sub.status === "ended" && sub.endedReason !== null ? { endedReason: sub.endedReason } : {}),
    };
  }

  async function rowsOf(db: Db, intentId: string): Promise<PushRow[]> {
    return db
      .selectFrom("holder_push")
      .selectAll()
      .where("intent_id", "=", intentId)
      .orderBy("created_at")
      .execute();
  }

  async function ownRow(db: Db, intentId: string, subscriptionId: string): Promise<PushRow> {
    const row = await db
      .selectFrom("holder_push")
      .selectAll()
      .where("id", "=", subscriptionId)
      .where("intent_id", "=", intentId)
      .executeTakeFirst();
    if (row === undefined) {
      throw new HolderError(
        "ERR_HOLDER_NOT_FOUND",
        "this intent has no subscription with that subscriptionId",
      );
    }
    return row;
  }

  /** The subscription's engine view; a purged one reads as ended. */
  async function engineView(db: Db, id: string): Promise<SubscriptionView | undefined> {
    try {
      return await engine.get(d(db), id);
    } catch (error) {
      if (error instanceof DeliveryError && error.code === "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION")
        return undefined;
      throw error;
    }
  }

  /** Delivery refusals (a url the egress policy refuses, a malformed secret) become the agent's error. */
  async function engineCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof DeliveryError) {
        const code =
          error.code === "ERR_DELIVERY_SUBSCRIPTION_ENDED" ? "ERR_HOLDER_GONE" : "ERR_HOLDER_INVALID";
        throw new HolderError(code, error.message);
      }
      throw error;
    }
  }

  async function liveRows(db: Db, intentId: string): Promise<{ row: PushRow; sub: SubscriptionView }[]> {
    const live: { row: PushRow; sub: SubscriptionView }[] = [];
    for (const row of await rowsOf(db, intentId)) {
      const sub = await engineView(db, row.id);
      if (sub !== undefined && sub.status !== "ended") live.push({ row, sub });
    }
    return live;
  }

  async function enqueueStatus(db: Db, row: PushRow, status: IntentStatus): Promise<void> {
    if (!eventsOf(row).includes(STATUS_EVENT)) return;
    const event = checkedDoorbell(STATUS_EVENT, iso(ctx.clock()), { subscriptionId: row.id, status });
    await engine.enqueue(d(db), row.id, event);
  }

  function lease(
    now: number,
    intentEnds: number,
    test: boolean,
  ): { expiresAt: number; refreshBefore: number } {
    const expiresAt = Math.min(now + (test ? testLeaseMs : leaseMs), intentEnds);
    // Renew in the last tenth of the lease: 3 days before the end of a 30-day lease (the §9 example).
    return { expiresAt, refreshBefore: expiresAt - Math.floor((expiresAt - now) / 10) };
  }

  async function mailApproval(intentId: string, subscriptionId: string): Promise<void> {
    const intent = await store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intentId)
      .executeTakeFirst();
    if (intent === undefined || intent.confirmed_at === null || intent.contact_sealed === null) return;
    const row = await ownRow(store.db, intentId, subscriptionId);
    const token = newPageToken();
    const claimed = await store.db
      .updateTable("holder_push")
      .set({ approval_token_hash: ctx.codes.hash(token), approval_sent_at: ctx.clock() })
      .where("id", "=", subscriptionId)
      .where("approval_sent_at", "is", null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return;
    const contact = openContact(ctx, intentId, intent.contact_sealed);
    const hosts = hostsOf(row);
    const mail = notificationApprovalMail({
      holderName: ctx.config.name,
      statement: intent.statement,
      manageUrl: manageUrl(ctx, contact.manageToken),
      approveUrl: `${ctx.config.publicUrl}/notifications/${token}`,
      deliveryHost: hosts.deliveryHost,
      ...(hosts.relayFor === undefined ? {} : { relayFor: hosts.relayFor }),
    });
    await sendQuietly(ctx, { to: contact.email, ...mail }, "notification_approval", intentId);
  }

  async function grant(db: Db, row: PushRow): Promise<SubscriptionView> {
    const sub = await engineCall(() => engine.approve(d(db), row.id));
    await db.updateTable("holder_push").set({ approval: "granted" }).where("id", "=", row.id).execute();
    return sub;
  }

  async function byApprovalToken(token: string): Promise<{ row: PushRow; sub: SubscriptionView }> {
    const notValid = () =>
      new HolderError(
        "ERR_HOLDER_NOT_FOUND",
        "this approval link is not valid; open it from the holder's e-mail",
      );
    if (typeof token !== "string" || !PAGE_TOKEN.test(token)) throw notValid();
    const rows = await store.db
      .selectFrom("holder_push")
      .selectAll()
      .where("approval_token_hash", "in", ctx.codes.lookupHashes(token))
      .execute();
    const row = rows.find((candidate) =>
      candidate.approval_token_hash !== null ? ctx.codes.verify(token, candidate.approval_token_hash) : false,
    );
    const sub = row === undefined ? undefined : await engineView(store.db, row.id);
    if (row === undefined || sub === undefined) throw notValid();
    return { row, sub };
  }

  async function endAll(intentId: string, reason: string): Promise<string[]> {
    const ended = await store.transaction(async (trx) => {
      const ids: string[] = [];
      for (const { row } of await liveRows(trx, intentId)) {
        await engine.end(d(trx), row.id, reason, { notify: true });
        ids.push(row.id);
      }
      return ids;
    });
    emit(ended);
    return ended;
  }

  return {
    async subscribe(principal, request) {
      const intentId = intentIdOf(principal);
      const events =
        request.events === undefined || request.events.length === 0
          ? [...PUSH_EVENTS]
          : [...new Set(request.events)];
      if (request.relayFor !== undefined && !HOST_NAME.test(request.relayFor)) {
        throw new HolderError("ERR_HOLDER_INVALID", "relayFor must be a host name of at most 253 characters");
      }
      const url = normalisedUrl(request.delivery.url);
      const now = ctx.clock();
      const test = request.test === true;
      const result = await store.transaction(async (trx) => {
        const intent = await trx
          .selectFrom("holder_intents")
          .selectAll()
          .where("id", "=", intentId)
          .executeTakeFirst();
        if (intent === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
        const status = effectiveStatus(intent, now);
        if (status === "expired" || status === "withdrawn") {
          throw new HolderError(
            "ERR_HOLDER_GONE",
            `this intent has ${status === "expired" ? "expired" : "been withdrawn"}: nothing more can change for it`,
          );
        }
        const ends =
          status === "awaiting_consent" && intent.draft_expires_at !== null
            ? intent.draft_expires_at
            : intent.valid_until;
        const live = await liveRows(trx, intentId);
        const hashes = new Set(ctx.codes.lookupHashes(url));
        const same = live.find(({ row }) => hashes.has(row.url_hash) && row.test === (test ? 1 : 0));
        if (same !== undefined) {
          // §4.1: the same code and url renew (same id, new lease, the new secret after its challenge).
          const sub = await engineCall(() =>
            engine.renew(d(trx), same.row.id, { ...lease(now, ends, test), secret: request.delivery.secret }),
          );
          await trx
            .updateTable("holder_push")
            .set({ events_json: JSON.stringify(events) })
            .where("id", "=", same.row.id)
            .execute();
          return { view: answer({ ...same.row, events_json: JSON.stringify(events) }, sub), mail: false };
        }
        if (live.length >= maxPerIntent) {
          throw new HolderError(
            "ERR_HOLDER_CONFLICT",
            `this intent already has ${live.length} notification subscriptions, the most allowed (push profile §6 rule 6); unsubscribe one first`,
          );
        }
        const approval: Approval = test
          ? "not-required"
          : status === "awaiting_consent"
            ? "on-consent-page"
            : "sent-to-verified-channel";
        const sub = await engineCall(() =>
          engine.subscribe(d(trx), {
            channel: "push",
            url,
            secret: request.delivery.secret,
            ...lease(now, ends, test),
            requiresApproval: !test,
          }),
        );
        const row: PushRow = {
          id: sub.id,
          intent_id: intentId,
          url_hash: ctx.codes.hash(url),
          hosts_sealed: ctx.sealer.seal(
            JSON.stringify({
              deliveryHost: new URL(url).hostname,
              ...(request.relayFor === undefined ? {} : { relayFor: request.relayFor.toLowerCase() }),
            }),
            hostsAad(sub.id),
          ),
          events_json: JSON.stringify(events),
          approval,
          consent_choice: 0,
          approval_token_hash: null,
          approval_sent_at: null,
          test: test ? 1 : 0,
          created_at: now,
        };
        await trx.insertInto("holder_push").values(row).execute();
        // Rule 9: the test subscription hears the current status once it has proved its endpoint.
        if (test) await enqueueStatus(trx, row, status);
        return {
          view: answer(row, sub),
          mail: approval === "sent-to-verified-channel" && status === "active",
        };
      });
      ctx.log.info(
        { event: "push.subscribed", intentId, subscriptionId: result.view.subscriptionId },
        "push subscription",
      );
      if (result.mail) await mailApproval(intentId, result.view.subscriptionId);
      return result.view;
    },

    async unsubscribe(principal, subscriptionId) {
      const intentId = intentIdOf(principal);
      const view = await store.transaction(async (trx) => {
        const row = await ownRow(trx, intentId, subscriptionId);
        const sub = await engineView(trx, row.id);
        if (sub === undefined)
          throw new HolderError("ERR_HOLDER_NOT_FOUND", "this subscription has ended and been deleted");
        // The agent asked: its answer says ended, so no subscription.ended follows.
        return answer(row, await engine.end(d(trx), row.id, "unsubscribed", { notify: false }));
      });
      emit([subscriptionId]);
      return view;
    },

    async view(principal, subscriptionId) {
      const row = await ownRow(store.db, intentIdOf(principal), subscriptionId);
      const sub = await engineView(store.db, row.id);
      if (sub === undefined)
        throw new HolderError("ERR_HOLDER_NOT_FOUND", "this subscription has ended and been deleted");
      return answer(row, sub);
    },

    async enqueueMatches(trx, found) {
      if (found.count === 0) return;
      const subs = await liveSubscriptionsOf(trx as unknown as Db, found);
      const wanting = subs.filter((sub) => eventsOf(sub).includes(MATCHES_EVENT));
      if (wanting.length === 0) return;
      const counts = countFor(found, new Map(wanting.map((sub) => [sub.intent_id, sub])));
      for (const sub of wanting) {
        if (!counts.has(sub.intent_id)) continue; // a live subscription of an intent not in `found`
        const event = checkedDoorbell(MATCHES_EVENT, iso(ctx.clock()), {
          subscriptionId: sub.id,
          newMatches: counts.get(sub.intent_id) as number,
          latestDeliveredAt: iso(found.deliveredAt),
        });
        await engine.enqueue(d(trx as unknown as Db), sub.id, event);
      }
    },

    async onActivated(intentId) {
      const toMail: string[] = [];
      const touched = await store.transaction(async (trx) => {
        const intent = await trx
          .selectFrom("holder_intents")
          .select("valid_until")
          .where("id", "=", intentId)
          .executeTakeFirstOrThrow();
        const ids: string[] = [];
        for (const { row } of await liveRows(trx, intentId)) {
          ids.push(row.id);
          if (row.approval === "on-consent-page") {
            if (row.consent_choice === 1) {
              await grant(trx, row);
              // Made on a draft, its lease ended with the draft's 24 hours: now it may run with the intent.
              await engine.renew(d(trx), row.id, lease(ctx.clock(), intent.valid_until, false));
              await enqueueStatus(trx, row, "active");
            } else {
              // §6 rule 3: confirmed without the separate choice, the subscription ends.
              await engine.end(d(trx), row.id, "approval-withdrawn", { notify: false });
            }
          } else if (row.approval === "sent-to-verified-channel") {
            toMail.push(row.id);
          } else {
            await enqueueStatus(trx, row, "active");
          }
        }
        return ids;
      });
      for (const id of toMail) await mailApproval(intentId, id);
      emit(touched);
    },

    async onIntentEnded(intentId, reason) {
      await endAll(intentId, `intent-${reason}`);
    },

    async consentChoices(intentId) {
      const out: NotificationReceipt[] = [];
      for (const { row, sub } of await liveRows(store.db, intentId)) {
        if (row.approval === "on-consent-page") out.push(receipt(row, sub));
      }
      return out;
    },

    async chooseOnConsent(intentId, chosenIds) {
      const chosen = new Set(chosenIds);
      await store.transaction(async (trx) => {
        for (const { row } of await liveRows(trx, intentId)) {
          if (row.approval !== "on-consent-page") continue;
          await trx
            .updateTable("holder_push")
            .set({ consent_choice: chosen.has(row.id) ? 1 : 0 })
            .where("id", "=", row.id)
            .execute();
        }
      });
    },

    async approvalView(token) {
      const { row, sub } = await byApprovalToken(token);
      const intent = await store.db
        .selectFrom("holder_intents")
        .select("statement")
        .where("id", "=", row.intent_id)
        .executeTakeFirstOrThrow();
      return { intentId: row.intent_id, statement: intent.statement, receipt: receipt(row, sub) };
    },

    async approveByToken(token) {
      const { row } = await byApprovalToken(token);
      return this.approve(row.intent_id, row.id);
    },

    async receipts(intentId) {
      const out: NotificationReceipt[] = [];
      for (const row of await rowsOf(store.db, intentId)) {
        const sub = await engineView(store.db, row.id);
        if (sub !== undefined) out.push(receipt(row, sub));
      }
      return out;
    },

    async approve(intentId, subscriptionId) {
      const result = await store.transaction(async (trx) => {
        const intent = await trx
          .selectFrom("holder_intents")
          .selectAll()
          .where("id", "=", intentId)
          .executeTakeFirst();
        if (intent === undefined || effectiveStatus(intent, ctx.clock()) !== "active") {
          throw new HolderError(
            "ERR_HOLDER_GONE",
            "notifications can be allowed only while the intent is active",
          );
        }
        const row = await ownRow(trx, intentId, subscriptionId);
        const current = await engineView(trx, row.id);
        if (current === undefined || current.status === "ended") {
          throw new HolderError(
            "ERR_HOLDER_GONE",
            "this subscription has ended; the assistant has to ask again",
          );
        }
        if (row.approval === "granted" || row.approval === "not-required") return receipt(row, current);
        const sub = await grant(trx, row);
        // The agent's first doorbell: it is on, and the intent is active (sent once its challenge passed).
        await enqueueStatus(trx, row, "active");
        return receipt({ ...row, approval: "granted" }, sub);
      });
      ctx.log.info(
        { event: "push.approved", intentId, subscriptionId },
        "notifications allowed by the person",
      );
      emit([subscriptionId]);
      return result;
    },

    async revoke(intentId, subscriptionId) {
      const result = await store.transaction(async (trx) => {
        const row = await ownRow(trx, intentId, subscriptionId);
        const current = await engineView(trx, row.id);
        if (current === undefined)
          throw new HolderError("ERR_HOLDER_GONE", "this subscription has already ended");
        if (current.status === "ended") return receipt(row, current);
        return receipt(row, await engine.end(d(trx), row.id, "approval-withdrawn", { notify: true }));
      });
      ctx.log.info(
        { event: "push.revoked", intentId, subscriptionId },
        "notifications stopped by the person",
      );
      emit([subscriptionId]);
      return result;
    },

    async sweep() {
      const now = ctx.clock();
      const rows = await store.db
        .selectFrom("holder_push as p")
        .innerJoin("delivery_subscriptions as d", "d.id", "p.id")
        .innerJoin("holder_intents as i", "i.id", "p.intent_id")
        .selectAll("i")
        .where("d.status", "!=", "ended")
        .where((eb) =>
          eb.or([
            eb("i.status", "in", ["expired", "withdrawn"]),
            eb("i.valid_until", "<=", now),
            eb.and([eb("i.status", "=", "awaiting_consent"), eb("i.draft_expires_at", "<=", now)]),
          ]),
        )
        .execute();
      let ended = 0;
      for (const intent of new Map(rows.map((row) => [row.id, row])).values()) {
        const status = effectiveStatus(intent, now);
        ended += (await endAll(intent.id, status === "withdrawn" ? "intent-withdrawn" : "intent-expired"))
          .length;
      }
      // The engine purged these (§6 rule 7): forget the holder's side too.
      await store.db
        .deleteFrom("holder_push")
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("delivery_subscriptions as d")
                .select("d.id")
                .whereRef("d.id", "=", "holder_push.id"),
            ),
          ),
        )
        .execute();
      return ended;
    },

    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async changed(intentIds) {
      if (listeners.size === 0 || intentIds.length === 0) return;
      const ids: string[] = [];
      for (let i = 0; i < intentIds.length; i += 500) {
        const rows = await store.db
          .selectFrom("holder_push")
          .select("id")
          .where("intent_id", "in", intentIds.slice(i, i + 500))
          .execute();
        ids.push(...rows.map((row) => row.id));
      }
      emit(ids);
    },
  };
}

/** Above this many matches, one query for every live subscription beats lists of ids. */
const MANY_MATCHES = 2_000;

/**
 * The live (not ended) push subscriptions that may belong to intents in `found`. A large import can
 * touch most active intents while few have subscriptions: then all live ones are read once.
 */
async function liveSubscriptionsOf(
  db: Db,
  found: FoundMatches,
): Promise<{ id: string; intent_id: string; events_json: string }[]> {
  const live = () =>
    db
      .selectFrom("holder_push as p")
      .innerJoin("delivery_subscriptions as d", "d.id", "p.id")
      .select(["p.id", "p.intent_id", "p.events_json"])
      .where("d.status", "!=", "ended");
  // Every live one: the caller counts the matches of each and skips those with none.
  if (found.count > MANY_MATCHES) return live().execute();
  const intentIds = [...new Set(found.byOffer.flatMap((offer) => offer.intentIds))];
  const subs = [];
  for (let i = 0; i < intentIds.length; i += 500) {
    for (const sub of await live()
      .where("p.intent_id", "in", intentIds.slice(i, i + 500))
      .execute())
      subs.push(sub);
  }
  return subs;
}
