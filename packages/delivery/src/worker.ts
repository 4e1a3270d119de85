import { attemptRow, type OpenedKeys, openKeys } from "./attempt.js";
import { pushEnvelope } from "./channels.js";
import { coalescedCarriers, countMatchesDoorbell, matchesOpenAt } from "./coalesce.js";
import type { EngineContext } from "./context.js";
import { recordRecovery } from "./endpoint-state.js";
import { DeliveryError } from "./errors.js";
import { createHostGate, destinationHost, type HostGate } from "./host-gate.js";
import { randomId } from "./ids.js";
import type { HeadRow } from "./outbox/backend.js";
import { hasQueuedMatches, insertRow } from "./outbox/rows.js";
import { putBack } from "./put-back.js";
import type { SubscriptionRow } from "./schema.js";
import { end } from "./subscriptions.js";
import { holdDueRows } from "./throttle.js";
import { needsChallenge, sendChallenge } from "./verification.js";

/** Time kept free at the end of a lease so the last attempt's result is recorded while it is held. */
const LEASE_MARGIN_MS = 5_000;
/** Subscriptions of one destination host processed at once, by default (Outpost's figure). */
export const DEFAULT_PER_HOST_CONCURRENCY = 8;
/** How long a subscription over its host's cap waits in the process for one of the host's slots. */
const HOST_WAIT_MS = 1_000;
/** One that waited in vain (or found the host's queue full) is due again after 1 to 2 times this. */
const HOST_BUSY_DEFER_MS = 1_000;

export interface WorkerOptions {
  /** Subscriptions handled at once by this process (one delivery in flight per subscription). */
  concurrency?: number;
  /**
   * Subscriptions of one destination host handled at once (default 8): a host that hangs holds at
   * most this many of `concurrency`'s slots. As many more wait up to a second for the host's next
   * free slot, holding no worker slot; beyond that, or after the second, a subscription is put back
   * for a second or two without an attempt.
   */
  perHostConcurrency?: number;
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
  const perHost = options.perHostConcurrency ?? DEFAULT_PER_HOST_CONCURRENCY;
  if (!(Number.isInteger(perHost) && perHost >= 1)) {
    throw new DeliveryError("ERR_DELIVERY_CONFIG", "perHostConcurrency is a whole number of at least 1");
  }
  const hosts = createHostGate(perHost);
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
  // Claimed subscriptions waiting for a slot of their host (dispatch).
  const waiting = new Set<Promise<void>>();
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
  const claim = (limit: number) => ctx.outbox.claimDue(ctx, workerId, limit, leaseMs);

  const process = (sub: SubscriptionRow, host: string | undefined) => {
    const slot = heldSlot(hosts, host);
    const done = processSubscription(ctx, sub, workerId, leaseMs, maxPerClaim, commitClock, slot)
      .catch((error: unknown) => {
        // The lease expires and another pass retries; nothing is lost. Never log secrets or URLs.
        ctx.log.error(
          { subscription: sub.id, err: (error as Error).message },
          "processing a subscription failed",
        );
      })
      .finally(() => {
        slot.free();
        inFlight.delete(done);
        nudge();
      });
    inFlight.add(done);
  };

  /**
   * Starts the claimed subscriptions whose host has room. One over its host's cap waits for the
   * host's next free slot (usually a few milliseconds away); it holds its lease but no worker slot
   * meanwhile, so a hanging host cannot take the worker's slots with its waiters. One that finds
   * the host's queue full, or waits HOST_WAIT_MS in vain, is put back for a second or two.
   */
  const dispatch = (claimed: readonly SubscriptionRow[]) => {
    for (const sub of claimed) {
      const host = hostOf(sub);
      if (hosts.tryEnter(host)) process(sub, host);
      else waitForSlot(sub, host as string);
    }
  };
  const waitForSlot = (sub: SubscriptionRow, host: string) => {
    const waited: Promise<void> = hosts
      .waitFor(host, HOST_WAIT_MS)
      .then(async (entered) => {
        if (entered && running) return process(sub, host);
        if (entered) hosts.leave(host);
        ctx.metrics.hostDeferrals.inc();
        // Whole milliseconds: wake_at is a bigint on PostgreSQL, and the jitter is fractional.
        await putBack(
          ctx,
          sub.id,
          workerId,
          Math.round(ctx.clock() + HOST_BUSY_DEFER_MS * (1 + ctx.random())),
        );
      })
      .catch((error: unknown) =>
        ctx.log.error({ err: (error as Error).message }, "putting back a subscription failed"),
      )
      .finally(() => waiting.delete(waited));
    waiting.add(waited);
  };

  const hostOf = (sub: SubscriptionRow): string | undefined => {
    try {
      return destinationHost(ctx, sub);
    } catch {
      // An endpoint that does not open is the attempt's failure to report, not the gate's.
      return undefined;
    }
  };

  const run = async () => {
    while (running) {
      woken = false;
      const free = concurrency - inFlight.size;
      const claimed = free > 0 ? await claim(free).catch(() => []) : [];
      dispatch(claimed);
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
      // One pass over what it claimed: over its host's cap, a subscription waits for a slot.
      await Promise.all(
        claimed.map(async (sub) => {
          const host = hostOf(sub);
          await hosts.enter(host);
          const slot = heldSlot(hosts, host);
          try {
            await processSubscription(ctx, sub, workerId, leaseMs, maxPerClaim, commitClock, slot);
          } finally {
            slot.free();
          }
        }),
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
      await Promise.all(waiting);
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

/** One subscription's slot of its host: freed at most once per taking, taken back to send again. */
interface HeldSlot {
  free(): void;
  take(): Promise<void>;
}

function heldSlot(hosts: HostGate, host: string | undefined): HeldSlot {
  let held = true;
  return {
    free() {
      if (!held) return;
      held = false;
      hosts.leave(host);
    },
    async take() {
      if (held) return;
      await hosts.enter(host);
      held = true;
    },
  };
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
  /** Its host's slot, held on entry. */
  slot: HeldSlot,
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
    // Given back before each release: taken again when the release finds more to do.
    await slot.take();
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
      // The successes of every pass of this claim are counted when it is released (health.ts).
      if (drained.delivered)
        delivered = { ...drained.delivered, count: drained.delivered.count + (delivered?.count ?? 0) };
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
      // No attempt is made from here to the release: the slot is free before the release is
      // written, as the next claim (in the same commit on SQLite) may find another subscription
      // of this host due, and a slot still counted then would put that one back for a second.
      slot.free();
      if ((await ctx.outbox.release(ctx, { id: claimed.id, workerId, delivered, wait })) !== "busy") return;
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

/** deliveryStatus a claim's successes leave behind, written when the subscription is released. */
interface Delivered {
  /** The last success. */
  at: number;
  /** No failure came after it: lastError and failedSince are cleared. */
  clear: boolean;
  /** Successes in the claim, added to the endpoint's health by the release. */
  count: number;
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
    const rows = each
      ? await ctx.outbox.dueRows(ctx, sub.id, wanted, ctx.clock())
      : await ctx.outbox.headRows(ctx, sub.id, wanted);
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
        delivered = { at: ctx.clock(), clear: true, count: (delivered?.count ?? 0) + 1 };
        // Rare: the first success after the endpoint was disabled announces its recovery.
        if (sub.disabled_at !== null) {
          await recordRecovery(ctx, sub, delivered.at);
          sub = { ...sub, disabled_at: null, disabled_reason: null };
        }
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
      if (attempted.throttledUntil !== undefined && each) {
        // 429/503 speaks for the endpoint, not the event: the other due events wait as long.
        await holdDueRows(ctx, sub.id, attempted.throttledUntil);
        return done();
      }
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
  const coalesced = ctx.coalesced;
  if (sub.agg_new_matches === 0 || coalesced === undefined) return;
  const now = ctx.clock();
  if (now < matchesOpenAt(ctx.limits, sub)) return;
  await ctx.store.transaction(async (trx) => {
    if (await hasQueuedMatches(ctx, trx, sub.id)) return;
    const current = await trx
      .selectFrom("delivery_subscriptions")
      .selectAll()
      .where("id", "=", sub.id)
      .executeTakeFirstOrThrow();
    if (current.agg_new_matches === 0 || current.status !== "active") return;
    // Whatever queued them, they are not rung for a subscription that may not carry them.
    if (!(await coalescedCarriers(coalesced, trx, [sub.id])).has(sub.id)) {
      await trx
        .updateTable("delivery_subscriptions")
        .set({ agg_new_matches: 0, agg_latest_delivered_at: null, agg_first_at: null })
        .where("id", "=", sub.id)
        .execute();
      return;
    }
    // The caller builds the body (and checks it against its protocol) from the aggregate.
    const timestamp = new Date(now).toISOString();
    const data = coalesced.body({
      subscriberId: current.subscriber_id,
      count: current.agg_new_matches,
      latest: current.agg_latest_delivered_at,
      timestamp,
    });
    const body = pushEnvelope(coalesced.event, timestamp, data);
    await insertRow(trx, sub.id, {
      webhookId: randomId("msg_"),
      type: coalesced.event,
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
