import type { EngineContext } from "../../context.js";
import { addMatchesEach } from "../../matches-added.js";
import { readTargets } from "../../targets.js";
import type { OutboxBackend } from "../backend.js";
import { insertRows } from "./append.js";
import { grouped, recordDelivery, sending } from "./group-commit.js";
import { dueRows, headRows } from "./heads.js";
import { claimDue, release } from "./leases.js";

/**
 * SQLite: one connection, so the engine's own writes of one event-loop turn share a commit (and its
 * fsync), hot reads run cached statements, and other processes are not told of commits: they poll.
 */
export const sqliteOutbox: OutboxBackend<EngineContext> = {
  targets: (_ctx, db, ids) => readTargets(db, ids),
  append: insertRows,
  addMatches: addMatchesEach,
  claimDue,
  headRows,
  dueRows,
  release,
  transaction: grouped,
  sending,
  recordDelivery,
  notify: async () => {},
};
