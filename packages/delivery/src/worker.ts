import { sql } from "@doorbell/store";
import { attemptRow, type HeadRow, type OpenedKeys, openKeys } from "./attempt.js";
import { pushEnvelope } from "./channels.js";
import { countMatchesDoorbell, MATCHES_EVENT, matchesOpenAt, QUEUED_MATCHES_TYPE } from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import { DeliveryError } from "./errors.js";
import { grouped } from "./group-commit.js";
import { randomId } from "./ids.js";
import { insertRow } from "./outbox.js";
import { dueRowsPostgres, headRowsPostgres } from "./postgres-heads.js";
import { claimDuePostgres } from "./postgres-leases.js";
import { releasePostgres } from "./postgres-releases.js";
import type { SubscriptionRow } from "./schema.js";
import { end } from "./subscriptions.js";
import { needsChallenge, sendChallenge } from "./verification.js";
import { nextWake } from "./wake.js";

/** Time kept free at the end of a lease so the last attempt's result is recorded while it is held. */
const LEASE_MARGIN_MS = 5_000;

export interface WorkerOptions {
  /** Subscriptions handled at once by this process (one delivery in flight per subscription). */
  concurrency?: number;
  /** How long a claim holds a subscription; longer than the 10 s request timeout plus margin. */
  leaseMs?: number;
  /** How often an idle worker looks for due work when nobody wakes it. */
  pollMs?: number;
  /** Rows delivered one after another within one claim before the subscription is released. */
  maxPerClaim?: number;
  /** Names this process in leases. */
  workerId?: string;
}

export interface Worker {
  /** Claims and processes due subscriptions once; resolves with how many it processed. */
  tick(): Promise<number>;
  start(): void;
  /** Stops claiming and waits for the subscriptions in hand. */
  stop(): Promise<void>;
}

export function createWorker(
  ctx: EngineContext,
  options: WorkerOptions = {},
): Worker & { wake(): void; committed(): void } {
  const concurrency = options.concurrency ?? 16;
  const leaseMs = options.leaseMs ?? 60_000;
  // A lease must outlast one attempt (the policy's timeout) plus a margin, or nothing is ever sent.
  if (!(leaseMs > ctx.policy.timeoutMs + LEASE_MARGIN_MS)) {
    throw new DeliveryError(
      "ERR_DELIVERY_CONFIG",
      `leaseMs must exceed the egress timeout plus ${LEASE_MARGIN_MS} ms (${ctx.policy.timeoutMs + LEASE_MARGIN_MS} ms)`,
    );
  }
  const pollMs = options.pollMs ?? 250;
  const maxPerClaim = options.maxPerClaim ?? 250;
  const workerId = options.workerId ?? randomId("wrk_", 12);
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  // Set by every wake-up: one that came while a claim was in flight (before the sleep could hear
  // it) makes the loop claim again at once instead of sleeping a whole poll with work due.
  let woken = false;
  const nudge = () => {
    woken = true;
    wakeUp?.();
  };
  // Releases that found their row held by an enqueue wait for its commit's notification.
  let commitWaiters: Array<() => void> = [];
  // Commits seen so far: a pass that began before the last one need not wait for the next.
  let commits = 0;
  const nextCommit = (timeoutMs: number, since: number) =>
    since !== commits
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          commitWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });

  const commitClock = { next: nextCommit, count: () => commits };
  const claim = (limit: number) => claimDue(ctx, workerId, limit, leaseMs);

  const process = (sub: SubscriptionRow) => {
    const done = processSubscription(ctx, sub, workerId, leaseMs, maxPerClaim, commitClock)
      .catch((error: unknown) => {
        // The lease expires and another pass retries; nothing is lost. Never log secrets or URLs.
        ctx.log.error(
          { subscription: sub.id, err: (error as Error).message },
          "processing a subscription failed",
        );
      })
      .finally(() => {
        inFlight.delete(done);
        nudge();
      });
    inFlight.add(done);
  };

  const run = async () => {
    while (running) {
      woken = false;
      const free = concurrency - inFlight.size;
      const claimed = free > 0 ? await claim(free).catch(() => []) : [];
      for (const sub of claimed) process(sub);
      // SQLite answers synchronously: yield to the event loop so HTTP answers and timers run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if ((claimed.length === 0 || inFlight.size >= concurrency) && !woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wakeUp = () => {
            clearTimeout(timer);
            wakeUp = undefined;
            resolve();
          };
        });
      }
    }
  };

  return {
    async tick() {
      const claimed = await claim(concurrency);
      await Promise.all(
        claimed.map((sub) => processSubscription(ctx, sub, workerId, leaseMs, maxPerClaim, commitClock)),
      );
      return claimed.length;
    },
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
      await Promise.all(inFlight);
    },
    wake: nudge,
    committed() {
      commits++;
      const waiters = commitWaiters;
      commitWaiters = [];
      for (const waiter of waiters) waiter();
      nudge();
    },
  };
}

/**
 * Leases up to `limit` subscriptions that have something due; SKIP LOCKED lets processes share one
 * PostgreSQL. On SQLite the claim shares its commit with the releases and recorded deliveries of
 * the same turn (group-commit.ts).
 */
async function claimDue(
  ctx: EngineContext,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<SubscriptionRow[]> {
  if (ctx.store.dialect === "postgres") return claimDuePostgres(ctx, workerId, limit, leaseMs);
  return grouped(ctx, async (trx) => {
    const now = ctx.clock();
    let due = trx
      .selectFrom("delivery_subscriptions")
      .select("id")
      .where("wake_at", "<=", now)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now)]))
      .orderBy("wake_at")
      .limit(limit);
    if (ctx.store.dialect === "postgres") due = due.forUpdate().skipLocked();
    const ids = (await due.execute()).map((row) => row.id);
    if (ids.length === 0) return [];
    return trx
      .updateTable("delivery_subscriptions")
      .set({ lease_owner: workerId, lease_until: now + leaseMs })
      .where("id", "in", ids)
      .returningAll()
      .execute();
  });
}

async function reload(ctx: EngineContext, id: string): Promise<SubscriptionRow | undefined> {
  return ctx.store.db
    .selectFrom("delivery_subscriptions")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirst();
}

/** How long a release that found its row held by an enqueue waits before draining again. */
const BUSY_PAUSE_MS = 25;
/** How long one claim may keep draining while enqueues keep its row busy. */
const MAX_BUSY_HOLD_MS = 2_000;

/** Everything due for one leased subscription, in order: lease end, challenge, coalesced matches, queue. */
async function processSubscription(
  ctx: EngineContext,
  claimed: SubscriptionRow,
  workerId: string,
  leaseMs: number,
  maxPerClaim: number,
  /** Resolves at the next commit notification (or after `timeoutMs`), at once if one came `since`. */
  committed: { next(timeoutMs: number, since: number): Promise<void>; count(): number },
): Promise<void> {
  // The lease the database holds, not one counted from now: claiming may have waited for a lock.
  const leaseEnds = claimed.lease_until ?? ctx.clock() + leaseMs;
  let sub: SubscriptionRow | undefined = claimed;
  let delivered: Delivered | undefined;
  const started = ctx.clock();
  // PostgreSQL: set once a release found the row held by an enqueue (see below).
  let busy = false;
  // The endpoint and secrets, opened once per claim (a challenge under the lease reopens them).
  let keys: OpenedKeys | undefined;
  for (;;) {
    // Commits notified after this may have added rows this pass's head read does not see.
    const passStarted = committed.count();
    if (sub && sub.status !== "ended" && ctx.clock() >= sub.expires_at) {
      await ctx.store.transaction((trx) => end(ctx, trx, claimed.id, "lease-expired", { notify: true }));
      sub = await reload(ctx, claimed.id);
    }
    if (sub && needsChallenge(sub) && sub.verify_due_at !== null && sub.verify_due_at <= ctx.clock()) {
      await sendChallenge(ctx, sub);
      sub = await reload(ctx, claimed.id);
      keys = undefined;
    }
    if (sub?.status === "active" && sub.delivery_active === 1) {
      await flushMatches(ctx, sub);
    }
    let sent = 0;
    if (sub && (sub.status === "ended" || (sub.status === "active" && sub.delivery_active === 1))) {
      const drained = await drainQueue(ctx, sub, leaseEnds, maxPerClaim, keys);
      keys = drained.keys;
      sent = drained.sent;
      // With the failures it wrote: the next pass counts on from them, and a suspension holds.
      sub = drained.sub;
      // A later pass's failure without a success keeps the earlier success's time, not its clearing.
      if (drained.delivered) delivered = drained.delivered;
      else if (sent > 0 && delivered) delivered = { ...delivered, clear: false };
    }
    // PostgreSQL: a release answers "busy" while an enqueue holds the row. The enqueue is adding
    // work, so the lease is kept and the queue drained again after its commit's notification, and
    // again after each later commit while that finds rows; a release is tried once a pass finds
    // none. After holding the lease a while, or near its end, the release waits for the row, so a
    // busy subscription does not keep a worker slot for long.
    const now = ctx.clock();
    const wait =
      now - started >= MAX_BUSY_HOLD_MS || now + ctx.policy.timeoutMs + LEASE_MARGIN_MS >= leaseEnds;
    if (!busy || sent === 0 || wait) {
      if ((await release(ctx, claimed.id, workerId, delivered, wait)) !== "busy") return;
      busy = true;
    }
    await committed.next(BUSY_PAUSE_MS, passStarted);
    // The row as read is good for the next pass: the lease is ours until `leaseEnds` (drainQueue
    // never works past it), the endpoint and secrets change only under it, and an end or renewal
    // meanwhile is seen by the release. Read again only before ending it as expired.
    if (sub === undefined || ctx.clock() >= sub.expires_at) {
      sub = await reload(ctx, claimed.id);
      if (!sub || sub.lease_owner !== workerId) return;
    }
  }
}

/**
 * Head rows fetched per query. They stay valid while each delivery's row is still there when it is
 * recorded: only `end()` removes another row of a leased subscription, and it removes all of them
 * at once (`attemptRow` then answers "gone"). Bounds what one claim holds in memory: at most
 * this many bodies of up to 256 KiB.
 */
const PREFETCH = 8;

/** Stand-ins compiled into the head query, replaced by each call's values. */
const SUB_PARAM = "\u0000subscription";
const LIMIT_PARAM = -1_000_001;
const NOW_PARAM = -1_000_002;

function compileHeadQuery(ctx: EngineContext) {
  // Only what an attempt uses: each column a row carries costs a conversion per row read.
  return ctx.store.db
    .selectFrom("delivery_outbox")
    .select([
      "id",
      "seq",
      "webhook_id",
      "type",
      "body",
      "attempts",
      "first_attempt_at",
      "next_attempt_at",
      "final",
    ])
    .where("subscription_id", "=", SUB_PARAM)
    .where("seq", ">", deliveredSeq(SUB_PARAM))
    .orderBy("seq")
    .limit(LIMIT_PARAM)
    .compile();
}

/**
 * "each" order: the first rows of the queue that are due, skipping those waiting for a retry, each
 * with the oldest row before it that waits (the watermark: its cursor is then held back). That
 * lookup walks the queue's index from its start and stops at the first waiting row, so it passes
 * at most the due rows read with it.
 */
function compileDueQuery(ctx: EngineContext) {
  return ctx.store.db
    .selectFrom("delivery_outbox as o")
    .select((eb) => [
      "o.id",
      "o.seq",
      "o.webhook_id",
      "o.type",
      "o.body",
      "o.attempts",
      "o.first_attempt_at",
      "o.next_attempt_at",
      "o.final",
      eb
        .selectFrom("delivery_outbox as w")
        .select("w.seq")
        .whereRef("w.subscription_id", "=", "o.subscription_id")
        .whereRef("w.seq", "<", "o.seq")
        .where("w.next_attempt_at", ">", NOW_PARAM)
        .orderBy("w.seq")
        .limit(1)
        .as("older_waiting"),
    ])
    .where("o.subscription_id", "=", SUB_PARAM)
    .where("o.seq", ">", deliveredSeq(SUB_PARAM))
    .where("o.next_attempt_at", "<=", NOW_PARAM)
    .orderBy("o.seq")
    .limit(LIMIT_PARAM)
    .compile();
}

const headQueries = new WeakMap<EngineContext, ReturnType<typeof compileHeadQuery>>();
const dueQueries = new WeakMap<EngineContext, ReturnType<typeof compileDueQuery>>();

/**
 * The next rows of a subscription's queue not yet delivered, in order. The hottest read (one per
 * `PREFETCH` deliveries): compiled once and run through `store.read`, which on SQLite runs the
 * cached statement directly instead of going through Kysely's builder and executor. On PostgreSQL
 * the reads of one event-loop turn share one statement (postgres-heads.ts).
 */
function headRows(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]> {
  if (ctx.store.dialect === "postgres") return headRowsPostgres(ctx, id, limit);
  let compiled = headQueries.get(ctx);
  if (!compiled) {
    compiled = compileHeadQuery(ctx);
    headQueries.set(ctx, compiled);
  }
  const parameters = compiled.parameters.map((value) =>
    value === SUB_PARAM ? id : value === LIMIT_PARAM ? limit : value,
  );
  return ctx.store.read({ ...compiled, parameters }) as Promise<HeadRow[]>;
}

/** `headRows` for a channel of "each" order: the next due rows, in order (see `compileDueQuery`). */
function dueRows(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]> {
  const now = ctx.clock();
  if (ctx.store.dialect === "postgres") return dueRowsPostgres(ctx, id, limit, now);
  let compiled = dueQueries.get(ctx);
  if (!compiled) {
    compiled = compileDueQuery(ctx);
    dueQueries.set(ctx, compiled);
  }
  const parameters = compiled.parameters.map((value) =>
    value === SUB_PARAM ? id : value === LIMIT_PARAM ? limit : value === NOW_PARAM ? now : value,
  );
  return ctx.store.read({ ...compiled, parameters }) as Promise<HeadRow[]>;
}

/** deliveryStatus a claim's successes leave behind, written when the subscription is released. */
interface Delivered {
  /** The last success. */
  at: number;
  /** No failure came after it: lastError and failedSince are cleared. */
  clear: boolean;
}

/**
 * Sends rows one after another while the lease has room for another attempt; resolves with what
 * the successes leave for deliveryStatus, how many attempts were made, and the subscription as the
 * failures left it. "queue" order (push) sends the head while it succeeds: a failure stops the
 * queue. "each" order (MCP Events) sends every due row in seq order, skipping rows that wait for a
 * retry, and goes on after a failure.
 */
async function drainQueue(
  ctx: EngineContext,
  start: SubscriptionRow,
  leaseEnds: number,
  maxPerClaim: number,
  opened: OpenedKeys | undefined,
): Promise<{ delivered: Delivered | undefined; sent: number; keys: OpenedKeys; sub: SubscriptionRow }> {
  let sub = start;
  const policy = ctx.channels[sub.channel];
  const each = policy.order === "each";
  // Opened once per claim: the endpoint never changes, and the secrets change only through a
  // challenge, which is sent under this lease before the queue is drained.
  const keys = opened ?? openKeys(ctx, sub);
  let delivered: Delivered | undefined;
  let sent = 0;
  // "each": rows that failed in this pass and wait for their retry (their seqs); rows that waited
  // when read are in `older_waiting`.
  let waiting: Set<number> | undefined;
  const done = () => ({ delivered, sent, keys, sub });
  const room = () => sent < maxPerClaim && ctx.clock() + ctx.policy.timeoutMs + LEASE_MARGIN_MS < leaseEnds;
  while (room()) {
    const wanted = Math.min(PREFETCH, maxPerClaim - sent);
    const rows = each ? await dueRows(ctx, sub.id, wanted) : await headRows(ctx, sub.id, wanted);
    if (rows.length === 0) return done();
    for (const head of rows) {
      if (!room() || head.next_attempt_at > ctx.clock()) return done();
      if (sub.status === "ended" && head.final !== 1) return done();
      const attempted = await attemptRow(
        ctx,
        sub,
        head,
        keys,
        policy.watermark && olderPending(head, waiting) ? HOLD_CURSOR : undefined,
      );
      const outcome = attempted.outcome;
      sent++;
      if (outcome === "delivered" || outcome === "gone") {
        delivered = { at: ctx.clock(), clear: true };
        if (outcome === "gone") return done();
        waiting?.delete(head.seq);
        // What a success means to the next failure's bookkeeping (failedSince starts again);
        // nothing else an attempt reads changes under the lease.
        if (sub.last_error !== null || sub.failed_since !== null || sub.consecutive_failures !== 0) {
          sub = { ...sub, last_error: null, failed_since: null, consecutive_failures: 0 };
        }
        continue;
      }
      // attemptRow wrote the failure; an earlier success still sets lastDeliveryAt.
      if (delivered) delivered = { ...delivered, clear: false };
      if (attempted.status) sub = { ...sub, ...attempted.status };
      if (outcome === "stopped" || (outcome === "retry_later" && !each)) return done();
      if (outcome === "retry_later") {
        waiting ??= new Set();
        waiting.add(head.seq);
      } else waiting?.delete(head.seq);
      // Dropped or given up (removed), or waiting for its retry on an "each" channel: the next row.
    }
    // A short read reached the end of the queue: no read just to find it empty. Rows enqueued
    // since are seen by the release, which makes the subscription due again (or by the next pass).
    if (rows.length < wanted) return done();
  }
  return done();
}

const HOLD_CURSOR = { withoutCursor: true } as const;

/**
 * Whether an older row of the queue is still pending when `head` is sent: one waiting for its
 * retry when the rows were read, or one that failed since in this pass. Rows given up on count as
 * done (the watermark may pass them, MCP Events sketch).
 */
function olderPending(head: HeadRow, waiting: ReadonlySet<number> | undefined): boolean {
  if (head.older_waiting !== null && head.older_waiting !== undefined) return true;
  if (waiting) for (const seq of waiting) if (seq < head.seq) return true;
  return false;
}

/** Turns the waiting matches aggregate into one doorbell once the window is open (push profile §6 rule 6). */
async function flushMatches(ctx: EngineContext, sub: SubscriptionRow): Promise<void> {
  if (sub.agg_new_matches === 0) return;
  const now = ctx.clock();
  if (now < matchesOpenAt(ctx.limits, sub)) return;
  await ctx.store.transaction(async (trx) => {
    if (await hasQueuedMatches(trx, sub.id)) return;
    const current = await trx
      .selectFrom("delivery_subscriptions")
      .selectAll()
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    if (current.agg_new_matches === 0 || current.status !== "active") return;
    const body = pushEnvelope(MATCHES_EVENT, new Date(now).toISOString(), {
      subscriptionId: current.subscriber_id,
      newMatches: current.agg_new_matches,
      latestDeliveredAt: current.agg_latest_delivered_at,
    });
    await insertRow(trx, sub.id, {
      webhookId: randomId("msg_"),
      type: MATCHES_EVENT,
      body,
      now,
      final: false,
    });
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        agg_new_matches: 0,
        agg_latest_delivered_at: null,
        agg_first_at: null,
        ...countMatchesDoorbell(current, now),
      })
      .where("id", "=", sub.id)
      .execute();
  });
}

/**
 * The highest seq of the subscription's queue that was delivered (delivery_progress, delivered.ts):
 * rows at or below it are done and only wait for `release` to delete them.
 */
function deliveredSeq(id: string) {
  return sql<number>`coalesce((select delivered_seq from delivery_progress where subscription_id = ${id}), 0)`;
}

async function hasQueuedMatches(db: Db, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("delivery_outbox")
    .select("id")
    .where("subscription_id", "=", id)
    .where("seq", ">", deliveredSeq(id))
    .where("type", "=", QUEUED_MATCHES_TYPE)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Gives the subscription back with its next wake-up computed from fresh state under the row lock,
 * so an event enqueued while we held the lease is never missed, and writes the deliveryStatus of
 * the claim's successes (once per claim rather than once per delivery: see delivered.ts). An ended
 * subscription past its purge time is deleted instead. On SQLite this shares the turn's commit; on
 * PostgreSQL the releases of one turn share a read and a write without a lock (postgres-releases.ts).
 */
async function release(
  ctx: EngineContext,
  id: string,
  workerId: string,
  delivered: Delivered | undefined,
  wait: boolean,
): Promise<"released" | "busy" | "lost"> {
  if (ctx.store.dialect === "postgres") return releasePostgres(ctx, { id, workerId, delivered, wait });
  return grouped(ctx, async (trx) => {
    const sub = await trx
      .selectFrom("delivery_subscriptions")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    if (!sub || sub.lease_owner !== workerId) return "lost";
    if (sub.status === "ended" && sub.purge_at !== null && ctx.clock() >= sub.purge_at) {
      // Push profile §6 rule 7: the subscription, its secret and its endpoint are deleted.
      await trx.deleteFrom("delivery_subscriptions").where("id", "=", id).execute();
      return "released";
    }
    // The rows the claim delivered (and any a crashed claim left) go in one ranged delete.
    await trx
      .deleteFrom("delivery_outbox")
      .where("subscription_id", "=", id)
      .where("seq", "<=", deliveredSeq(id))
      .execute();
    const head =
      ctx.channels[sub.channel].order === "each"
        ? await earliestRow(trx, id)
        : await trx
            .selectFrom("delivery_outbox")
            .select(["next_attempt_at", "final", "type"])
            .where("subscription_id", "=", id)
            .orderBy("seq")
            .limit(1)
            .executeTakeFirst();
    const wake = nextWake(ctx, sub, head, await hasQueuedMatches(trx, id));
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        wake_at: wake,
        lease_owner: null,
        lease_until: null,
        ...(delivered
          ? {
              last_delivery_at: delivered.at,
              // Otherwise the failure after it was written later, with its own time.
              ...(delivered.clear
                ? { last_error: null, failed_since: null, consecutive_failures: 0, updated_at: delivered.at }
                : {}),
            }
          : {}),
      })
      .where("id", "=", id)
      .where("lease_owner", "=", workerId)
      .execute();
    return "released";
  });
}

/**
 * "each" order: what is due first is the earliest retry of the whole queue, not its head (rows
 * behind a waiting one are due at once).
 */
async function earliestRow(
  db: Db,
  id: string,
): Promise<{ next_attempt_at: number; final: number } | undefined> {
  const row = await db
    .selectFrom("delivery_outbox")
    .select((eb) => [
      eb.fn.min<number>("next_attempt_at").as("next_attempt_at"),
      eb.fn.max<number>("final").as("final"),
    ])
    .where("subscription_id", "=", id)
    .executeTakeFirst();
  if (row?.next_attempt_at === null || row?.next_attempt_at === undefined) return undefined;
  return { next_attempt_at: Number(row.next_attempt_at), final: Number(row.final) };
}

/** Queue depth and the age of the oldest due row, for the metrics gauges. */
export async function sampleQueue(
  ctx: Pick<EngineContext, "store" | "clock">,
): Promise<{ depth: number; oldestDueMs: number }> {
  const now = ctx.clock();
  const row = await ctx.store.db
    .selectFrom("delivery_outbox as o")
    .leftJoin("delivery_progress as p", "p.subscription_id", "o.subscription_id")
    .where((eb) => eb.or([eb("p.delivered_seq", "is", null), eb("o.seq", ">", eb.ref("p.delivered_seq"))]))
    .select((eb) => [
      eb.fn.countAll<number>().as("depth"),
      eb.fn.min<number>("o.next_attempt_at").as("oldest"),
    ])
    .executeTakeFirst();
  const oldest = row?.oldest === null || row?.oldest === undefined ? now : Number(row.oldest);
  return { depth: Number(row?.depth ?? 0), oldestDueMs: Math.max(0, now - oldest) };
}
