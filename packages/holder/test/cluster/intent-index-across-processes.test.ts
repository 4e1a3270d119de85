// Issue #14 item 4: one active-intent index across processes. An intent activated, changed or
// ended in one process (here: one handle and one matching service each, as two `doorbell serve`
// would have) reaches the other's index through LISTEN/NOTIFY, so that process's imports tell it;
// after the listening connection is lost the index is reloaded whole. SQLite has one process.

import { sql } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTENT_CHANNEL, startIntentFeed } from "../../src/cluster/intent-feed.js";
import { createMatchingService } from "../../src/matching/service.js";
import { createTestHolderContext, fakeClock } from "../../src/testing.js";
import { carOffer, insertIntent, setIntentStatus } from "../support/offer-helpers.js";

const log = pino({ level: "silent" });

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("activations and ends in one process reach the other's index", async () => {
    const clock = fakeClock();
    const a = await createTestHolderContext(engine.db, clock.now, { reset: true });
    const other = engine.dialect === "postgres" ? await engine.connect() : engine.db;
    const b = await createTestHolderContext(other, clock.now);
    const matchingA = createMatchingService(a);
    const matchingB = createMatchingService(b);
    await matchingA.start();
    await matchingB.start();
    const feeds = [
      await startIntentFeed({ store: engine.db, matching: matchingA, log }),
      await startIntentFeed({ store: other, matching: matchingB, log }),
    ];
    try {
      const id = await insertIntent(a, {
        status: "awaiting_consent",
        criteria: { category: "vehicles", make: "skoda", fuel: "diesel" },
        budget_amount: 15_000,
        budget_currency: "EUR",
      });
      await setIntentStatus(a, id, "active");
      await matchingA.onActivated(id); // what process A's intent hooks do after the commit
      expect(matchingA.matchOffer(carOffer())).toEqual([id]);
      if (engine.dialect === "sqlite") {
        // One process owns a SQLite file: the feed is off and nothing else changes.
        expect(matchingB.matchOffer(carOffer())).toEqual([]);
        return;
      }
      await until(() => matchingB.matchOffer(carOffer()).includes(id), "process B to learn the activation");

      await setIntentStatus(a, id, "withdrawn");
      matchingA.onEnded(id);
      await until(() => matchingB.matchOffer(carOffer()).length === 0, "process B to learn the end");

      // The listening connections are lost (a database restart, a proxy timeout): what is sent
      // meanwhile is missed, so once listening again each index is reloaded whole.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where query = ${`listen ${INTENT_CHANNEL}`} and pid <> pg_backend_pid()`.execute(engine.db.db);
      const missed = await insertIntent(a, {
        status: "active",
        criteria: { category: "vehicles", make: "skoda", fuel: "diesel" },
        budget_amount: 15_000,
        budget_currency: "EUR",
      });
      await until(
        () => matchingB.matchOffer(carOffer()).includes(missed),
        "process B to reload after reconnecting",
      );
    } finally {
      for (const feed of feeds) await feed.stop();
    }
  });
});
