import { Writable } from "node:stream";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointForSuite, engineOn, fakeClock, HOUR, runAtNextWake } from "./harness.js";

// Push profile §6 rule 8: the endpoint and the secret never appear in logs, metrics or errors, and
// the secret is stored only sealed. Canaries are planted in the URL path and the secret.
forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  const endpoint = endpointForSuite();

  it("no canary in logs, metrics, views, errors or the stored rows", async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "trace" },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const clock = fakeClock();
    const { engine, db, store } = await engineOn(fixture.db, clock.now, { logger });
    const pathCanary = "CANARYPATH7f3a";
    const secret = `whsec_${Buffer.from("CANARYSECRET-0123456789-abcdef").toString("base64")}`;
    const url = endpoint.url.replace("/hooks/doorbell", `/hooks/${pathCanary}`);
    endpoint.control.status = 500;
    const sub = await engine.subscribe(db, {
      channel: "push",
      url,
      secret,
      expiresAt: clock.now() + 48 * HOUR,
      refreshBefore: clock.now() + HOUR,
      requiresApproval: false,
    });
    await store.transaction((trx) =>
      engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: {} }),
    );
    for (let i = 0; i < 4; i++) await runAtNextWake(engine, db, clock, sub.id);
    const errors: string[] = [];
    await engine
      .enqueue(db, "sub_unknown", { type: "x", data: {} })
      .catch((e: Error) => errors.push(e.message));
    await engine
      .subscribe(db, {
        channel: "push",
        url: `ftp://127.0.0.1/${pathCanary}`,
        secret,
        expiresAt: clock.now() + HOUR,
        refreshBefore: clock.now() + 1,
        requiresApproval: false,
      })
      .catch((e: Error) => errors.push(e.message));
    const rows = JSON.stringify(await db.selectFrom("delivery_subscriptions").selectAll().execute());
    const outputs = {
      logs: lines.join(""),
      metrics: await engine.metrics.registry.metrics(),
      view: JSON.stringify(await engine.get(db, sub.id)),
      errors: errors.join("\n"),
    };
    expect(lines.length).toBeGreaterThan(0);
    expect(outputs.metrics).toContain("doorbell_delivery_attempts_total");
    for (const [where, text] of Object.entries(outputs)) {
      expect(text, where).not.toContain(pathCanary);
      expect(text, where).not.toContain("CANARYSECRET");
      expect(text, where).not.toContain(secret.slice(6, 30));
    }
    expect(rows).not.toContain(secret.slice(6, 30));
  });
});
