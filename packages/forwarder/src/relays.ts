/**
 * Relay records (push profile §7 rule 2): found by the keyed hash of their random path, by the
 * agent's code and url (renewal) or by the agent's code and subscriptionId (unsubscribe). The
 * forwarder's secret towards the holder is sealed under the forwarder's keyring, bound to the row.
 * The holder's code is never here (rule 1): only the agent's code opens it (records.ts).
 */
import { endedReasons, liveSubscription } from "@doorbell/delivery";
import { SUBSCRIPTION_END_REASONS, type SubscriptionEndReason } from "@doorbell/intents";
import { deliveryDb, type ForwarderContext, type ForwarderKysely } from "./context.js";
import type { RelayRow } from "./schema.js";

type Db = ForwarderKysely;
type Ctx = Pick<ForwarderContext, "store" | "sealer" | "hashers" | "clock">;

/** 32 base64url characters (192 bits, codes.ts `relayPathFor`), found again only through its keyed hash. */
export const RELAY_PATH = /^[A-Za-z0-9_-]{32}$/;

/** How long the previous secret towards the holder still verifies after a renewal changed it. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

const secretAd = (id: string, which: "current" | "previous") =>
  `forwarder.relay.holder_secret.${which}:${id}`;
const endpointKey = (forwarderCode: string, agentUrl: string) => `${forwarderCode}\n${agentUrl}`;

export interface NewRelay {
  agentSubscriptionId: string;
  path: string;
  forwarderCode: string;
  agentUrl: string;
  holderHost: string;
  holderSecret: string;
  expiresAt: number;
  refreshBefore: number;
}

export async function insertRelay(ctx: Ctx, relay: NewRelay): Promise<void> {
  const now = ctx.clock();
  const id = relay.agentSubscriptionId;
  await ctx.store.db
    .insertInto("forwarder_relays")
    .values({
      agent_subscription_id: id,
      path_hash: ctx.hashers.relayPath.hash(relay.path),
      owner_hash: ctx.hashers.relayOwner.hash(relay.forwarderCode),
      endpoint_hash: ctx.hashers.relayEndpoint.hash(endpointKey(relay.forwarderCode, relay.agentUrl)),
      holder_host: relay.holderHost,
      holder_subscription_id: null,
      holder_secret_sealed: ctx.sealer.seal(relay.holderSecret, secretAd(id, "current")),
      holder_previous_secret_sealed: null,
      holder_previous_until: null,
      expires_at: relay.expiresAt,
      refresh_before: relay.refreshBefore,
      status: "active",
      ended_reason: null,
      holder_end_due_at: null,
      holder_end_attempts: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

export async function relayByPath(ctx: Ctx, path: string): Promise<RelayRow | undefined> {
  if (!RELAY_PATH.test(path)) return undefined;
  const rows = await ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("path_hash", "in", ctx.hashers.relayPath.lookupHashes(path))
    .execute();
  return rows.find((row) => ctx.hashers.relayPath.verify(path, row.path_hash));
}

/** The live relay this code already has towards this url: a renewal (§4.1), not a new subscription. */
export async function relayForEndpoint(
  ctx: Ctx,
  forwarderCode: string,
  agentUrl: string,
): Promise<RelayRow | undefined> {
  const key = endpointKey(forwarderCode, agentUrl);
  const rows = await ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("endpoint_hash", "in", ctx.hashers.relayEndpoint.lookupHashes(key))
    .where("status", "=", "active")
    .execute();
  return rows.find((row) => ctx.hashers.relayEndpoint.verify(key, row.endpoint_hash));
}

/** The relay with this subscriptionId, if the code owns it; undefined otherwise (no oracle). */
export async function ownedRelay(
  ctx: Ctx,
  forwarderCode: string,
  agentSubscriptionId: string,
): Promise<RelayRow | undefined> {
  const row = await ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("agent_subscription_id", "=", agentSubscriptionId)
    .executeTakeFirst();
  return row !== undefined && ctx.hashers.relayOwner.verify(forwarderCode, row.owner_hash) ? row : undefined;
}

/** Every live relay of a code (withdrawing the intent ends them all). */
export async function ownedRelays(ctx: Ctx, forwarderCode: string): Promise<RelayRow[]> {
  const rows = await ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("owner_hash", "in", ctx.hashers.relayOwner.lookupHashes(forwarderCode))
    .where("status", "=", "active")
    .execute();
  return rows.filter((row) => ctx.hashers.relayOwner.verify(forwarderCode, row.owner_hash));
}

/**
 * This code's ended relays whose holder side may still live: their agent side ended without the
 * agent (410, delivery-failed, lease), when the holder could not be told (rule 1). The agent's
 * next visit with its code tells the holder.
 */
export async function endedRelaysAtHolder(ctx: Ctx, forwarderCode: string): Promise<RelayRow[]> {
  const rows = await ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("owner_hash", "in", ctx.hashers.relayOwner.lookupHashes(forwarderCode))
    .where("status", "=", "ended")
    .where("holder_subscription_id", "is not", null)
    .execute();
  return rows.filter((row) => ctx.hashers.relayOwner.verify(forwarderCode, row.owner_hash));
}

/**
 * Nothing is left to end at the holder for this ended relay: it answered an unsubscribe or an end
 * request, or it ended its side itself.
 */
export async function forgetHolderSide(db: Db, id: string): Promise<void> {
  await db
    .updateTable("forwarder_relays")
    // updated_at stays the moment it ended: the purge counts its day from there.
    .set({ holder_subscription_id: null, holder_end_due_at: null })
    .where("agent_subscription_id", "=", id)
    .where("status", "=", "ended")
    .execute();
}

/** The secrets a holder's doorbell may be signed with: the current one, and the previous for a while. */
export function holderSecrets(ctx: Pick<ForwarderContext, "sealer" | "clock">, row: RelayRow): string[] {
  const id = row.agent_subscription_id;
  const secrets = [ctx.sealer.openText(row.holder_secret_sealed, secretAd(id, "current"))];
  if (
    row.holder_previous_secret_sealed !== null &&
    row.holder_previous_until !== null &&
    row.holder_previous_until > ctx.clock()
  ) {
    secrets.push(ctx.sealer.openText(row.holder_previous_secret_sealed, secretAd(id, "previous")));
  }
  return secrets;
}

/**
 * A renewal's new secret towards the holder, in place before the holder is asked: its challenge,
 * signed with the new secret, may arrive before its answer does. The old one keeps verifying.
 */
export async function rotateHolderSecret(ctx: Ctx, row: RelayRow, newSecret: string): Promise<void> {
  const now = ctx.clock();
  const id = row.agent_subscription_id;
  await ctx.store.db
    .updateTable("forwarder_relays")
    .set({
      holder_secret_sealed: ctx.sealer.seal(newSecret, secretAd(id, "current")),
      holder_previous_secret_sealed: ctx.sealer.seal(
        ctx.sealer.openText(row.holder_secret_sealed, secretAd(id, "current")),
        secretAd(id, "previous"),
      ),
      holder_previous_until: now + PREVIOUS_SECRET_MS,
      updated_at: now,
    })
    .where("agent_subscription_id", "=", id)
    .execute();
}

/** Puts the secrets back as they were when the holder refused a renewal (its secret did not change). */
export async function restoreHolderSecrets(ctx: Ctx, row: RelayRow): Promise<void> {
  await ctx.store.db
    .updateTable("forwarder_relays")
    .set({
      holder_secret_sealed: row.holder_secret_sealed,
      holder_previous_secret_sealed: row.holder_previous_secret_sealed,
      holder_previous_until: row.holder_previous_until,
      updated_at: ctx.clock(),
    })
    .where("agent_subscription_id", "=", row.agent_subscription_id)
    .execute();
}

/** The holder answered: its subscriptionId and the lease it gave. */
export async function recordHolderSide(
  ctx: Ctx,
  id: string,
  update: { holderSubscriptionId: string; expiresAt: number; refreshBefore: number },
): Promise<void> {
  await ctx.store.db
    .updateTable("forwarder_relays")
    .set({
      holder_subscription_id: update.holderSubscriptionId,
      expires_at: update.expiresAt,
      refresh_before: update.refreshBefore,
      updated_at: ctx.clock(),
    })
    .where("agent_subscription_id", "=", id)
    .execute();
}

/**
 * What the end request tells the holder for a relay that ended this way: the agent's side ended
 * (its endpoint, its lease, its unsubscribe) or was purged before anyone looked. Undefined when
 * the holder's side needs no telling: the holder ended it, or refused or never had it.
 */
export function holderEndReason(reason: string | null): SubscriptionEndReason | undefined {
  if (reason === "purged") return "gone";
  return SUBSCRIPTION_END_REASONS.find((known) => known === reason);
}

/**
 * Ends the relay record (idempotent); the caller ends the agent's subscription in the same
 * transaction when it ends both. True when this call ended it (false: it had ended). When the
 * agent's side ended for a reason the holder should hear, its end request is due at once
 * (holder-ends.ts); when the holder has no subscription yet, there is nothing to send.
 */
export async function endRelay(db: Db, id: string, reason: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable("forwarder_relays")
    .set({
      status: "ended",
      ended_reason: reason,
      holder_end_due_at: holderEndReason(reason) === undefined ? null : now,
      updated_at: now,
    })
    .where("agent_subscription_id", "=", id)
    .where("status", "=", "active")
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Live relays whose agent's subscription has ended (or been purged): the holder's side still runs. */
export async function relaysEndedByAgent(
  ctx: Pick<ForwarderContext, "store">,
  limit = 100,
): Promise<{ id: string; reason: string }[]> {
  const db = ctx.store.db;
  const rows = await db
    .selectFrom("forwarder_relays as r")
    .select("r.agent_subscription_id as id")
    .where("r.status", "=", "active")
    .where(({ not, exists }) => not(exists(liveSubscription(deliveryDb(db), "r.agent_subscription_id"))))
    .limit(limit)
    .execute();
  const ended = await endedReasons(
    deliveryDb(db),
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    reason: ended.has(row.id) ? (ended.get(row.id) ?? "ended") : "purged",
  }));
}

/** Ended relays whose end request is due: the holder's side still runs and it may be told. */
export async function dueHolderEnds(ctx: Pick<ForwarderContext, "store" | "clock">, limit: number) {
  return ctx.store.db
    .selectFrom("forwarder_relays")
    .selectAll()
    .where("holder_end_due_at", "<=", ctx.clock())
    .where("status", "=", "ended")
    .where("holder_subscription_id", "is not", null)
    .orderBy("holder_end_due_at")
    .limit(limit)
    .execute();
}

/**
 * Takes a due end request for this process until `until`: a conditional update, so of several
 * processes seeing the same row one sends it. False when another took it first.
 */
export async function claimHolderEnd(db: Db, row: RelayRow, until: number): Promise<boolean> {
  if (row.holder_end_due_at === null) return false;
  const result = await db
    .updateTable("forwarder_relays")
    .set({ holder_end_due_at: until, holder_end_attempts: row.holder_end_attempts + 1 })
    .where("agent_subscription_id", "=", row.agent_subscription_id)
    .where("holder_end_due_at", "=", row.holder_end_due_at)
    .where("status", "=", "ended")
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The next end request at `at`, or none (null): the holder does not take them, or it gave up. */
export async function rescheduleHolderEnd(db: Db, id: string, at: number | null): Promise<void> {
  await db
    .updateTable("forwarder_relays")
    .set({ holder_end_due_at: at })
    .where("agent_subscription_id", "=", id)
    .where("status", "=", "ended")
    .execute();
}

/** Deletes relays ended for a day and webhook-ids seen more than 25 hours ago (the holder retries for 24). */
export async function purgeRelays(
  ctx: Pick<ForwarderContext, "store" | "clock">,
  keepMs = 25 * 60 * 60 * 1000,
) {
  const cutoff = ctx.clock() - keepMs;
  await ctx.store.db.deleteFrom("forwarder_relay_seen").where("seen_at", "<", cutoff).execute();
  await ctx.store.db
    .deleteFrom("forwarder_relays")
    .where("status", "=", "ended")
    .where("updated_at", "<", cutoff)
    .execute();
}
