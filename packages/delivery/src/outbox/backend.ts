import type { Kysely } from "@doorbell/store";
import type { EnqueueItem } from "../events.js";
import type { MatchesAdded } from "../matches-added.js";
import type { DeliveryTables, OutboxRow, SubscriptionRow } from "../schema.js";
import type { Target } from "../targets.js";

type Db = Kysely<DeliveryTables>;

/**
 * The outbox's storage as each engine does it best: SQLite shares one commit among the writes of
 * a turn (sqlite/), PostgreSQL batches reads and skips locked rows (postgres/). The engine picks
 * one when it is created (engine.ts); nothing else asks which database it runs on. `Ctx` is the
 * engine's context (context.ts), which holds the backend: a parameter, so neither module imports
 * the other's values or types in a loop.
 */
export interface OutboxBackend<Ctx> {
  /** The targets of an enqueue, by id; throws when one does not exist. */
  targets(
    ctx: Ctx,
    db: Db,
    ids: readonly string[],
    items: readonly EnqueueItem[],
  ): Promise<Map<string, Target>>;
  /**
   * Appends rows at the tails of their subscriptions' queues, in the caller's transaction, and
   * makes those subscriptions due. Resolves with the subscriptions that had ended (their rows
   * are not written: "dropped"); throws when one does not exist.
   */
  append(ctx: Ctx, db: Db, rows: readonly AppendRow[], now: number): Promise<Set<string>>;
  /** Adds matches reports to their subscriptions' waiting aggregates, in the caller's transaction. */
  addMatches(db: Db, reports: readonly MatchesAdded[], now: number): Promise<void>;
  /** Leases up to `limit` subscriptions that have something due. */
  claimDue(ctx: Ctx, workerId: string, limit: number, leaseMs: number): Promise<SubscriptionRow[]>;
  /** The next `limit` rows of a subscription's queue not yet delivered, in order. */
  headRows(ctx: Ctx, id: string, limit: number): Promise<HeadRow[]>;
  /**
   * "each" order: the next `limit` rows due at `now`, in order, skipping rows that wait for their
   * retry, each with the oldest older row that waits (`older_waiting`).
   */
  dueRows(ctx: Ctx, id: string, limit: number, now: number): Promise<HeadRow[]>;
  /**
   * Gives a lease back with the subscription's next wake-up, computed from fresh state, and
   * writes the deliveryStatus of the claim's successes; deletes an ended one past its purge time.
   */
  release(ctx: Ctx, request: ReleaseRequest): Promise<ReleaseResult>;
  /**
   * Runs `work` in a transaction. `work` must only write through `trx` and may run twice (SQLite
   * shares the transaction with the turn's other units and retries each alone when it fails).
   */
  transaction<T>(ctx: Ctx, work: (trx: Db) => Promise<T>): Promise<T>;
  /** Marks one attempt as in flight until the returned function is called: a hint for when to commit. */
  sending(ctx: Ctx): () => void;
  /** Records one delivered row; resolves with whether it was still there. */
  recordDelivery(ctx: Ctx, row: DeliveredRow): Promise<boolean>;
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
  /** deliveryStatus the claim's successes leave behind, and how many there were (health.ts). */
  delivered: { at: number; clear: boolean; count: number } | undefined;
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

/** The columns of an outbox row an attempt needs (the worker reads no more: see `headRows`). */
export type HeadRow = Pick<
  OutboxRow,
  "seq" | "webhook_id" | "type" | "body" | "attempts" | "first_attempt_at" | "next_attempt_at" | "final"
> & {
  id: number;
  /**
   * Channels that retry each event on its own: the seq of an older row of the queue waiting for
   * its retry when the row was read, or null (its cursor is then held back, `withoutCursor`).
   */
  older_waiting?: number | null;
};
