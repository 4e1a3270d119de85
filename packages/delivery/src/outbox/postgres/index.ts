import type { EngineContext } from "../../context.js";
import type { OutboxBackend } from "../backend.js";
import { appendRowsPostgres } from "./append.js";
import { deleteSoon } from "./deletes.js";
import { dueRowsPostgres, headRowsPostgres } from "./heads.js";
import { claimDuePostgres } from "./leases.js";
import { addMatchesPostgres } from "./matches.js";
import { notify } from "./notify.js";
import { releasePostgres } from "./releases.js";
import { rememberedTargets } from "./targets.js";

/**
 * PostgreSQL: many processes on one database. Claims and releases never wait for a row lock, the
 * reads and deletes of one event-loop turn share a statement, each unit of work is a transaction
 * of its own (pooled connections already share WAL flushes), and commits wake every process.
 */
export const postgresOutbox: OutboxBackend<EngineContext> = {
  targets: rememberedTargets,
  append: appendRowsPostgres,
  addMatches: addMatchesPostgres,
  claimDue: claimDuePostgres,
  headRows: headRowsPostgres,
  dueRows: dueRowsPostgres,
  release: releasePostgres,
  transaction: (ctx, work) => ctx.store.transaction(work),
  sending: () => () => {},
  recordDelivery: (ctx, row) => deleteSoon(ctx, row.rowId),
  notify,
};
