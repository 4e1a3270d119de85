import { sql } from "@doorbell/store";
import type { Db, EngineContext } from "../../context.js";
import type { DeliveredRow } from "../backend.js";

/**
 * SQLite group commit. Each commit costs a transaction on the one connection and an fsync (the
 * store runs it on the thread pool and settles the commit only once it is done), so the engine's
 * own writes that are asked for in the same event-loop turn (recording deliveries, releasing and
 * claiming subscriptions) share one `BEGIN IMMEDIATE` transaction. Each caller's promise settles
 * only after that commit is durable, so nothing anyone does after awaiting it can run ahead of its
 * write. On PostgreSQL each unit is a transaction of its own: pooled connections already share WAL
 * flushes, and grouping would make every unit wait for the row locks of all the others.
 */
interface Unit {
  run(trx: Db): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Delivery {
  rowId: number;
  subscriptionId: string;
  seq: number;
  /** Deleted rather than passed by the progress marker (see `recordDelivery`). */
  remove: boolean;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

interface Group {
  deliveries: Delivery[];
  units: Unit[];
  /** A flush is scheduled or running; later work waits for the next one. */
  busy: boolean;
  /** Attempts whose answer has not come yet: a flush waits a little for them (see `schedule`). */
  sending: number;
  /** The longest a flush waits for attempts still in flight. */
  wait: ReturnType<typeof setTimeout> | undefined;
}

/** Bound on the ids one statement carries (SQLite allows 32 766 variables). */
const MAX_DELIVERIES = 512;
/**
 * How long a commit waits for attempts still in flight to join it. Workers send to every leased
 * subscription at once and each waits for its commit before sending again, so answers arrive in
 * waves; one commit per wave instead of one per event-loop turn halves the fsyncs under load.
 */
const COMMIT_DELAY_MS = 1;
// Taken at load time, so a test that installs fake timers later cannot stall the commits.
const defer = setImmediate;
const startTimer = setTimeout;
const stopTimer = clearTimeout;
const groups = new WeakMap<EngineContext, Group>();

function groupOf(ctx: EngineContext): Group {
  let group = groups.get(ctx);
  if (!group) {
    group = { deliveries: [], units: [], busy: false, sending: 0, wait: undefined };
    groups.set(ctx, group);
  }
  return group;
}

function schedule(ctx: EngineContext, group: Group): void {
  if (group.busy) return;
  if (group.sending > 0) {
    // Flushed when the last answer comes (see `sending`) or after the delay, whichever is first.
    group.wait ??= startTimer(() => start(ctx, group), COMMIT_DELAY_MS);
    return;
  }
  start(ctx, group);
}

function start(ctx: EngineContext, group: Group): void {
  if (group.wait !== undefined) stopTimer(group.wait);
  group.wait = undefined;
  if (group.busy) return;
  group.busy = true;
  defer(() => void flush(ctx, group));
}

/**
 * Marks one attempt as in flight until the returned function is called (once its answer came and
 * before its result is recorded). Only a hint for when to commit: nothing waits on it for long.
 */
export function sending(ctx: EngineContext): () => void {
  const group = groupOf(ctx);
  group.sending++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    group.sending--;
    if (group.sending === 0 && group.wait !== undefined) start(ctx, group);
  };
}

/**
 * Runs `work` in a transaction, on SQLite together with whatever else is queued in this turn.
 * `work` must only write through `trx` and may run twice: when a shared transaction fails, every
 * unit is retried alone so that one failure does not fail the others.
 */
export function grouped<T>(ctx: EngineContext, work: (trx: Db) => Promise<T>): Promise<T> {
  const group = groupOf(ctx);
  return new Promise<T>((resolve, reject) => {
    group.units.push({ run: work, resolve: resolve as (value: unknown) => void, reject });
    schedule(ctx, group);
  });
}

/**
 * Records one delivered outbox row; resolves with whether the row was still there (it is gone when
 * the subscription ended meanwhile). The subscription's `delivery_progress` moves up to
 * the row's seq, for all rows of the group with one select and one upsert; the row itself is
 * skipped from then on and deleted in bulk when the subscription is released, so a commit writes
 * the progress page instead of the outbox table and index pages the rows are scattered over.
 * `remove`: the row is deleted instead (one statement for all such rows of the group), for a
 * channel that retries each event on its own, where rows below a delivered one may still wait
 * for their retry and the marker must never pass them. (PostgreSQL deletes the row instead,
 * postgres/deletes.ts: pooled connections already share WAL flushes, and progress there would
 * only add a ranged delete to every release.)
 */
export function recordDelivery(ctx: EngineContext, row: DeliveredRow): Promise<boolean> {
  const { rowId, subscriptionId, seq, remove } = row;
  const group = groupOf(ctx);
  return new Promise<boolean>((resolve, reject) => {
    group.deliveries.push({ rowId, subscriptionId, seq, remove, resolve, reject });
    schedule(ctx, group);
  });
}

async function flush(ctx: EngineContext, group: Group): Promise<void> {
  const deliveries = group.deliveries.splice(0, MAX_DELIVERIES);
  const units = group.units.splice(0);
  try {
    let recorded = new Set<number>();
    const results: unknown[] = [];
    try {
      await ctx.store.transaction(async (trx) => {
        recorded = deliveries.length > 0 ? await recordRows(ctx, trx, deliveries) : new Set();
        results.length = 0;
        for (const unit of units) results.push(await unit.run(trx));
      });
    } catch {
      // Rolled back: do each part alone, so a failure fails only its own caller.
      await alone(ctx, deliveries, units);
      return;
    }
    for (const delivery of deliveries) delivery.resolve(recorded.has(delivery.rowId));
    units.forEach((unit, index) => {
      unit.resolve(results[index]);
    });
  } finally {
    if (group.deliveries.length > 0 || group.units.length > 0) defer(() => void flush(ctx, group));
    else group.busy = false;
  }
}

async function alone(ctx: EngineContext, deliveries: Delivery[], units: Unit[]): Promise<void> {
  if (deliveries.length > 0) {
    try {
      const recorded = await ctx.store.transaction((trx) => recordRows(ctx, trx, deliveries));
      for (const delivery of deliveries) delivery.resolve(recorded.has(delivery.rowId));
    } catch (error) {
      // Nothing was recorded: the rows are delivered again once the leases expire.
      for (const delivery of deliveries) delivery.reject(error);
    }
  }
  for (const unit of units) {
    try {
      unit.resolve(await ctx.store.transaction((trx) => unit.run(trx)));
    } catch (error) {
      unit.reject(error);
    }
  }
}

/**
 * SQLite: records the group's deliveries, the progress ones and the removed ones; returns the ids
 * that were still there.
 */
async function recordRows(ctx: EngineContext, db: Db, deliveries: readonly Delivery[]): Promise<Set<number>> {
  if (!deliveries.some((delivery) => delivery.remove)) return progressRows(ctx, db, deliveries);
  const present = await removeRows(
    ctx,
    db,
    deliveries.filter((delivery) => delivery.remove),
  );
  const advanced = deliveries.filter((delivery) => !delivery.remove);
  if (advanced.length > 0) for (const id of await progressRows(ctx, db, advanced)) present.add(id);
  return present;
}

/**
 * The statements of `progressRows` and `removeRows`, compiled once per engine: their lists travel
 * as one JSON parameter (SQLite's json_each), so the SQL text never changes and its prepared
 * statement is reused.
 */
function compileProgress(ctx: EngineContext) {
  const db = ctx.store.db;
  return {
    remove: sql<{
      id: number;
    }>`delete from delivery_outbox where id in (select value from json_each(${""})) returning id`.compile(db),
    present: sql<{
      id: number;
    }>`select id from delivery_outbox where id in (select value from json_each(${""}))`.compile(db),
    // `where true` tells SQLite's parser the ON CONFLICT belongs to the upsert, not to a join.
    advance: sql`insert into delivery_progress (subscription_id, delivered_seq)
      select key, value from json_each(${""}) where true
      on conflict (subscription_id) do update
      set delivered_seq = max(delivery_progress.delivered_seq, excluded.delivered_seq)`.compile(db),
  };
}

const progressQueries = new WeakMap<EngineContext, ReturnType<typeof compileProgress>>();

function progressQueriesOf(ctx: EngineContext): ReturnType<typeof compileProgress> {
  let queries = progressQueries.get(ctx);
  if (!queries) {
    queries = compileProgress(ctx);
    progressQueries.set(ctx, queries);
  }
  return queries;
}

/** SQLite: deletes delivered rows by id; returns the ids that were still there. */
async function removeRows(ctx: EngineContext, db: Db, deliveries: readonly Delivery[]): Promise<Set<number>> {
  const ids = JSON.stringify(deliveries.map((d) => d.rowId));
  const { rows } = await db.executeQuery({ ...progressQueriesOf(ctx).remove, parameters: [ids] });
  return new Set((rows as { id: number }[]).map((row) => Number(row.id)));
}

/**
 * SQLite: moves each subscription's progress up to the highest of the given rows it still has;
 * returns the ids that were still there. A commit writes the few progress rows (a page or two)
 * instead of deleting outbox rows scattered over the table and its index.
 */
async function progressRows(
  ctx: EngineContext,
  db: Db,
  deliveries: readonly Delivery[],
): Promise<Set<number>> {
  const queries = progressQueriesOf(ctx);
  const ids = JSON.stringify(deliveries.map((d) => d.rowId));
  const { rows } = await db.executeQuery({ ...queries.present, parameters: [ids] });
  if (rows.length === 0) return new Set();
  const present = new Set((rows as { id: number }[]).map((row) => Number(row.id)));
  const highest = new Map<string, number>();
  for (const { rowId, subscriptionId, seq } of deliveries) {
    if (present.has(rowId) && seq > (highest.get(subscriptionId) ?? 0)) highest.set(subscriptionId, seq);
  }
  const progress = JSON.stringify(Object.fromEntries(highest));
  await db.executeQuery({ ...queries.advance, parameters: [progress] });
  return present;
}
