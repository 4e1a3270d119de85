/**
 * The shared rate-limit counters (migration set `holder-limits`): one row per limited key and
 * window, as rate-limiter-flexible's store limiters keep them. `key` is `<bucket>:<keyed hash>`,
 * never an address or a contact in clear; `expire` ends the window (epoch ms, null: never).
 */
import { defineMigrations, type Migration } from "@doorbell/store";

export interface RateLimitRow {
  key: string;
  points: number;
  expire: number | null;
}

export interface LimitsTables {
  holder_rate_limits: RateLimitRow;
}

const counters: Migration = {
  version: 1,
  name: "rate_limit_counters",
  async up(db, { types }) {
    await db.schema
      .createTable("holder_rate_limits")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("points", types.bigint, (c) => c.notNull())
      .addColumn("expire", types.timestamp)
      .execute();
    await db.schema
      .createIndex("holder_rate_limits_expire")
      .on("holder_rate_limits")
      .column("expire")
      .execute();
  },
};

/** Later versions are appended here; a released version never changes. */
export const limitsMigrations = defineMigrations("holder-limits", [counters]);
