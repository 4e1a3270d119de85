import type { HeadRow } from "../attempt.js";
import type { Db, EngineContext } from "../context.js";
import type { EnqueueItem } from "../events.js";
import type { SubscriptionRow } from "../schema.js";
import type { Target } from "../targets.js";

/**
 * The outbox's storage as each engine does it best: SQLite shares one commit among the writes of
 * a turn (sqlite/), PostgreSQL batches reads and skips locked rows (postgres/). The engine picks
 * one when it is created (engine.ts); nothing else asks which database it runs on.
 */
export interface OutboxBackend {
  /** The targets of an enqueue, by id; throws when one does not exist. */
  targets(
    ctx: EngineContext,
    db: Db,
    ids: readonly string[],
    items: readonly EnqueueItem[],
  ): Promise<Map<string, Target>>;
  /**
   * Appends rows at the tails of their subscriptions' queues, in the caller's transaction, and
   * makes those subscriptions due. Resolves with the subscriptions that had ended (their rows
   * are not written: "dropped"); throws when one does not exist.
   */
  append(ctx: EngineContext, db: Db, rows: readonly AppendRow[], now: number): Promise<Set<string>>;
  /** Leases up to `limit` subscriptions that have something due. */
  claimDue(ctx: EngineContext, workerId: string, limit: number, leaseMs: number): Promise<SubscriptionRow[]>;
  /** The next `limit` rows of a subscription's queue not yet delivered, in order. */
  headRows(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]>;
  /**
   * "each" order: the next `limit` rows due at `now`, in order, skipping rows that wait for their
   * retry, each with the oldest older row that waits (`older_waiting`).
   */
  dueRows(ctx: EngineContext, id: string, limit: number, now: number): Promise<HeadRow[]>;
  /**
   * Gives a lease back with the subscription's next wake-up, computed from fresh state, and
   * writes the deliveryStatus of the claim's successes; deletes an ended one past its purge time.
   */
  release(ctx: EngineContext, request: ReleaseRequest): Promise<ReleaseResult>;
  /**
   * Runs `work` in a transaction. `work` must only write through `trx` and may run twice (SQLite
   * shares the transaction with the turn's other units and retries each alone when it fails).
   */
  transaction<T>(ctx: EngineContext, work: (trx: Db) => Promise<T>): Promise<T>;
  /** Marks one attempt as in flight until the returned function is called: a hint for when to commit. */
  sending(ctx: EngineContext): () => void;
  /** Records one delivered row; resolves with whether it was still there. */
  recordDelivery(ctx: EngineContext, row: DeliveredRow): Promise<boolean>;
  /** Wakes the workers of other processes once `db`'s transaction commits (nothing where they poll). */
  notify(db: Db): Promise<void>;
}

/** A row to append, with its place among the rows of one enqueue call. */
export interface AppendRow {
  item: number;
  subscriptionId: string;
  webhookId: string;
  type: string;
  body: string;
}

export type ReleaseResult = "released" | "busy" | "lost";

export interface ReleaseRequest {
  id: string;
  workerId: string;
  /** deliveryStatus the claim's successes leave behind. */
  delivered: { at: number; clear: boolean } | undefined;
  /** false: skip a row an enqueue holds ("busy"); true: wait for it. */
  wait: boolean;
}

export interface DeliveredRow {
  rowId: number;
  subscriptionId: string;
  seq: number;
  /** Deleted rather than passed by a progress marker: older rows may still wait for their retry. */
  remove: boolean;
}
