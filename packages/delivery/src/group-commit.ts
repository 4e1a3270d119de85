import type { Db, EngineContext } from "./context.js";

/**
 * SQLite group commit. better-sqlite3 is synchronous and `synchronous=FULL` costs an fsync per
 * commit, which blocks the event loop that HTTP answers arrive on; so the engine's own writes that
 * are asked for in the same event-loop turn (recording deliveries, releasing and claiming
 * subscriptions) share one `BEGIN IMMEDIATE` transaction. Each caller's promise settles only after
 * that commit, so nothing anyone does after awaiting it can run ahead of its write. On PostgreSQL
 * each unit is a transaction of its own: pooled connections already share WAL flushes, and
 * grouping would make every unit wait for the row locks of all the others.
 */
interface Unit {
  run(trx: Db): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Deletion {
  rowId: number;
  resolve(removed: boolean): void;
  reject(error: unknown): void;
}

interface Group {
  deletions: Deletion[];
  units: Unit[];
  /** A flush is scheduled or running; later work waits for the next one. */
  busy: boolean;
  /** Attempts whose answer has not come yet: a flush waits a little for them (see `schedule`). */
  sending: number;
  /** The longest a flush waits for attempts still in flight. */
  wait: ReturnType<typeof setTimeout> | undefined;
}

/** Bound on the ids one statement carries (SQLite allows 32 766 variables). */
const MAX_DELETIONS = 512;
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
    group = { deletions: [], units: [], busy: false, sending: 0, wait: undefined };
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
  if (ctx.store.dialect !== "sqlite") return () => {};
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
  if (ctx.store.dialect !== "sqlite") return ctx.store.transaction(work);
  const group = groupOf(ctx);
  return new Promise<T>((resolve, reject) => {
    group.units.push({ run: work, resolve: resolve as (value: unknown) => void, reject });
    schedule(ctx, group);
  });
}

/**
 * Deletes one outbox row; resolves with whether it was still there. SQLite: one `delete … in (…)`
 * for all rows of the group. PostgreSQL: a statement of its own.
 */
export function deleteOutboxRow(ctx: EngineContext, rowId: number): Promise<boolean> {
  if (ctx.store.dialect !== "sqlite") {
    return deleteRows(ctx.store.db, [rowId]).then((removed) => removed.has(rowId));
  }
  const group = groupOf(ctx);
  return new Promise<boolean>((resolve, reject) => {
    group.deletions.push({ rowId, resolve, reject });
    schedule(ctx, group);
  });
}

async function flush(ctx: EngineContext, group: Group): Promise<void> {
  const deletions = group.deletions.splice(0, MAX_DELETIONS);
  const units = group.units.splice(0);
  try {
    let removed = new Set<number>();
    const results: unknown[] = [];
    try {
      await ctx.store.transaction(async (trx) => {
        removed =
          deletions.length > 0
            ? await deleteRows(
                trx,
                deletions.map((d) => d.rowId),
              )
            : new Set();
        results.length = 0;
        for (const unit of units) results.push(await unit.run(trx));
      });
    } catch {
      // Rolled back: do each part alone, so a failure fails only its own caller.
      await alone(ctx, deletions, units);
      return;
    }
    for (const deletion of deletions) deletion.resolve(removed.has(deletion.rowId));
    units.forEach((unit, index) => {
      unit.resolve(results[index]);
    });
  } finally {
    if (group.deletions.length > 0 || group.units.length > 0) defer(() => void flush(ctx, group));
    else group.busy = false;
  }
}

async function alone(ctx: EngineContext, deletions: Deletion[], units: Unit[]): Promise<void> {
  if (deletions.length > 0) {
    try {
      const removed = await ctx.store.transaction((trx) =>
        deleteRows(
          trx,
          deletions.map((d) => d.rowId),
        ),
      );
      for (const deletion of deletions) deletion.resolve(removed.has(deletion.rowId));
    } catch (error) {
      // Nothing was recorded: the rows are delivered again once the leases expire.
      for (const deletion of deletions) deletion.reject(error);
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

/** Deletes outbox rows by id; returns the ids that were still there. */
export async function deleteRows(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const removed = await db.deleteFrom("delivery_outbox").where("id", "in", ids).returning("id").execute();
  return new Set(removed.map((row) => Number(row.id)));
}
