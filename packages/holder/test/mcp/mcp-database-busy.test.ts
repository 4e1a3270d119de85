/**
 * A database saturated for a moment is not a fault: a tool call that meets it answers "busy, try
 * again in 1 s" (ERR_HOLDER_UNAVAILABLE with retryAfterSeconds), not ERR_HOLDER_INTERNAL, and the
 * next call succeeds. The saturation is real: on PostgreSQL a pool whose one connection is held
 * (its wait for a free connection runs out), on SQLite a second handle while the write lock is
 * held past its busy timeout; the publish tool's service writes through that handle.
 */
import type { Kysely } from "@doorbell/store";
import { forEachEngine, holdTransaction } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicPublish, ok, refused, startHolder } from "../support/mcp-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("answers busy, with when to try again, while the database is saturated; then works", async () => {
    const saturated = await engine.connect(
      engine.dialect === "sqlite" ? { busyTimeoutMs: 50 } : { maxConnections: 1, connectTimeoutMs: 200 },
    );
    const h = await startHolder(engine, {
      toolServices: (services) => ({
        ...services,
        intents: Object.assign(Object.create(services.intents), {
          // The publish writes through the saturated handle first, as a busy holder's would.
          async publish(...args: Parameters<typeof services.intents.publish>) {
            await (saturated.db as unknown as Kysely<{ holder_intents: { id: string; statement: string } }>)
              .updateTable("holder_intents")
              .set({ statement: "touched" })
              .where("id", "=", "nobody")
              .execute();
            return services.intents.publish(...args);
          },
        }),
      }),
    });
    try {
      const client = await h.connect();
      // Whoever holds the database: SQLite's write lock on the main handle, or the pool's only connection.
      const hold = await holdTransaction(engine.dialect === "sqlite" ? engine.db : saturated, (trx) =>
        (trx as unknown as Kysely<{ holder_intents: { id: string; statement: string } }>)
          .updateTable("holder_intents")
          .set({ statement: "held" })
          .where("id", "=", "nobody")
          .execute(),
      );
      const busy = await refused(client, "intent_publish_intent", basicPublish());
      await hold.release();
      expect(busy.code).toBe("ERR_HOLDER_UNAVAILABLE");
      expect(busy.retryAfterSeconds).toBe(1);
      expect(busy.text).toBe("the holder is busy; try again in 1 s (ERR_HOLDER_UNAVAILABLE)");
      const published = await ok<{ intent: { id: string } }>(client, "intent_publish_intent", basicPublish());
      expect(published.intent.id).toMatch(/\S/);
    } finally {
      await h.close();
      await saturated.close();
    }
  });
});
