import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeSubscription, engineOn, hostDeferrals, startEndpoint } from "./harness.js";

// Fair delivery: one destination host that never answers holds at most `perHostConcurrency` of a
// worker's slots, so another host's doorbells still go out, in order, while it hangs. A
// subscription over its host's cap is put back without an attempt: nothing of it is counted.

/**
 * A receiver on 127.0.0.2 that answers challenges and then holds every doorbell open until
 * `release()`: it counts the requests open at once.
 */
async function startHangingEndpoint() {
  const held: ServerResponse[] = [];
  let open = 0;
  let mostOpen = 0;
  let received = 0;
  let arrived: (() => void) | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type?: string;
        data?: { challenge?: string };
        challenge?: string;
      };
      const challenge = json.type === "verification" ? json.challenge : json.data?.challenge;
      if (typeof challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge }));
      }
      received++;
      open++;
      mostOpen = Math.max(mostOpen, open);
      res.on("close", () => open--);
      held.push(res);
      arrived?.();
    });
  });
  server.listen(0, "127.0.0.2");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.2:${port}/hooks/doorbell`,
    open: () => open,
    mostOpen: () => mostOpen,
    received: () => received,
    /** Resolves once `count` doorbells have arrived in all. */
    async reached(count: number) {
      while (received < count) await new Promise<void>((resolve) => (arrived = resolve));
    },
    /** Ends every held request (the attempts fail) and closes the server. */
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("a hanging host holds at most its per-host cap; the healthy host's doorbells all arrive, in order, on both channels", async () => {
    const healthy = await startEndpoint();
    const hanging = await startHangingEndpoint();
    // The longest timeout the egress allows: the held requests stay open while the test looks.
    const { engine, db, store } = await engineOn(fixture.db, Date.now, {
      policy: developmentPolicy({ timeoutMs: 10_000 }),
    });
    const stuck: Array<{ id: string }> = [];
    for (let i = 0; i < 12; i++)
      stuck.push(await activeSubscription(engine, db, { now: Date.now }, hanging.url));
    const fine: Array<{ id: string }> = [];
    for (let i = 0; i < 6; i++) {
      const channel = i % 2 === 0 ? "push" : "mcp";
      fine.push(
        await activeSubscription(engine, db, { now: Date.now }, healthy.url, {
          channel,
          subscriberId: `sub-${i}`,
        }),
      );
    }
    expect(healthy.challenges()).toHaveLength(6);

    // The hanging host's doorbells are queued first, so they are due first.
    await store.transaction(async (trx) => {
      for (const sub of stuck) await engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} });
    });
    await store.transaction(async (trx) => {
      for (let n = 1; n <= 3; n++) {
        for (const sub of fine) {
          await engine.enqueue(trx, sub.id, {
            type: "incident.created",
            eventId: `evt_${sub.id}_${n}`,
            data: { sub: sub.id, n },
          });
        }
      }
    });

    const worker = engine.worker({ concurrency: 4, perHostConcurrency: 2, pollMs: 20 });
    worker.start();
    try {
      await hanging.reached(2);
      const deadline = Date.now() + 20_000;
      while (healthy.events().length < 18 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));

      // Every healthy doorbell arrived while two requests to the other host hung all along.
      expect(healthy.events()).toHaveLength(18);
      for (const sub of fine) {
        const ns = healthy
          .events()
          .filter((e) => e.json.data?.sub === sub.id)
          .map((e) => e.json.data?.n);
        expect(ns).toEqual([1, 2, 3]);
      }
      expect(hanging.mostOpen()).toBe(2);
      expect(hanging.open()).toBe(2);

      // The others were put back, never attempted: no attempt counted, nothing logged (but for
      // a held request that timed out, had the test been slow).
      const rows = await db
        .selectFrom("delivery_outbox")
        .select(["subscription_id", "attempts"])
        .where(
          "subscription_id",
          "in",
          stuck.map((sub) => sub.id),
        )
        .execute();
      expect(rows).toHaveLength(12);
      const sent = hanging.received();
      expect(rows.filter((row) => row.attempts > 0).length).toBeLessThanOrEqual(sent - 2);
      expect((await db.selectFrom("delivery_attempt_log").selectAll().execute()).length).toBeLessThanOrEqual(
        sent - 2,
      );
      expect(await hostDeferrals(engine)).toBeGreaterThan(0);
    } finally {
      await hanging.close();
      await worker.stop();
      await healthy.close();
    }
  });

  it("refuses a per-host cap below 1", async () => {
    const { engine } = await engineOn(fixture.db, Date.now);
    expect(() => engine.worker({ perHostConcurrency: 0 })).toThrow(/perHostConcurrency/);
  });
});
