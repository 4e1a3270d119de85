import type { EngineContext } from "../../context.js";
import type { HeadRow } from "../backend.js";
import { deliveredSeq } from "../rows.js";

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
 * cached statement directly instead of going through Kysely's builder and executor.
 */
export function headRows(ctx: EngineContext, id: string, limit: number): Promise<HeadRow[]> {
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
export function dueRows(ctx: EngineContext, id: string, limit: number, now: number): Promise<HeadRow[]> {
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
