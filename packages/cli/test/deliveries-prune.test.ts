// `doorbell deliveries prune [--dry-run]` on a holder's database: the dry run counts per table and
// changes nothing; the prune deletes failed attempts and replayed dead letters past --older-than
// and dead letters never replayed past --dead-letters-older-than, and no more.
import { createDeliveryEngine, type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const DAY = 86_400_000;

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("the dry run counts and changes nothing; the prune deletes what is past its age, per table", async () => {
    const database = await fixture.createDatabase();
    const store = database.db as unknown as Database<DeliveryTables>;
    await migrate(store, [deliveryMigrations]);
    const engine = createDeliveryEngine({
      store,
      sealer: createSealer(new Keyring([generateKeyEntry()])),
      policy: developmentPolicy({ timeoutMs: 2_000 }),
    });
    const now = Date.now();
    const sub = await engine.subscribe(store.db, {
      channel: "mcp-standard",
      subscriberId: "5d1f0c7a-2b1e-4a7e-9c55-0f4f3e2a9b11",
      url: "http://127.0.0.1:9/hooks",
      secret: generateSecret(),
      expiresAt: now + 30 * DAY,
      refreshBefore: now + 27 * DAY,
      requiresApproval: false,
    });
    const attempt = (daysAgo: number) => ({
      subscription_id: sub.id,
      kind: "event",
      type: "incident.created",
      webhook_id: `evt_${daysAgo}`,
      attempt: 1,
      category: "http_5xx",
      http_status: 500,
      at: now - daysAgo * DAY,
    });
    await store.db
      .insertInto("delivery_attempt_log")
      .values([attempt(40), attempt(31), attempt(10)])
      .execute();
    const dead = (id: string, daysAgo: number, replayedDaysAgo: number | null) => ({
      id,
      subscription_id: sub.id,
      webhook_id: `evt_${id}`,
      type: "incident.created",
      body: "{}",
      attempts: 5,
      first_attempt_at: now - daysAgo * DAY,
      last_attempt_at: now - daysAgo * DAY,
      category: "http_5xx",
      reason: "retries-exhausted",
      created_at: now - daysAgo * DAY,
      replayed_at: replayedDaysAgo === null ? null : now - replayedDaysAgo * DAY,
    });
    await store.db
      .insertInto("delivery_dead_letters")
      .values([
        dead("dlq_old", 100, null),
        dead("dlq_replayed_long_ago", 60, 45),
        dead("dlq_replayed_lately", 60, 5),
        dead("dlq_waiting", 40, null),
      ])
      .execute();
    const left = async () => ({
      attempts: (
        await store.db.selectFrom("delivery_attempt_log").select("webhook_id").orderBy("at").execute()
      ).map((row) => row.webhook_id),
      deadLetters: (
        await store.db.selectFrom("delivery_dead_letters").select("id").orderBy("id").execute()
      ).map((row) => row.id),
    });
    const before = await left();
    const where = ["--database", database.url];

    const dry = captureIo();
    expect(await run(["deliveries", "prune", "--dry-run", ...where], dry.io)).toBe(0);
    expect(dry.out()).toContain("Dry run: nothing is deleted.");
    expect(dry.out()).toMatch(/delivery_attempt_log\s+would delete 2 failed attempt\(s\)/);
    expect(dry.out()).toMatch(/delivery_dead_letters\s+would delete 2 dead letter\(s\)/);
    expect(await left()).toEqual(before);

    const pruned = captureIo();
    expect(await run(["deliveries", "prune", ...where], pruned.io)).toBe(0);
    expect(pruned.out()).toMatch(/delivery_attempt_log\s+deleted 2 failed attempt\(s\)/);
    expect(pruned.out()).toMatch(/delivery_dead_letters\s+deleted 2 dead letter\(s\)/);
    expect(await left()).toEqual({
      attempts: ["evt_10"],
      deadLetters: ["dlq_replayed_lately", "dlq_waiting"],
    });

    // Shorter ages from the flags (N or Nd), or from the variables doorbell serve reads.
    const shorter = captureIo({ DOORBELL_DEAD_LETTER_DAYS: "30" });
    expect(await run(["deliveries", "prune", "--older-than", "7d", ...where], shorter.io)).toBe(0);
    // Every dead letter is past 30 days now, replayed lately or not: the longer age bounds them all.
    expect(await left()).toEqual({ attempts: [], deadLetters: [] });

    const wrong = captureIo();
    expect(await run(["deliveries", "prune", "--older-than", "soon", ...where], wrong.io)).toBe(2);
    expect(wrong.err()).toContain(
      '--older-than takes whole days from 1 to 3650 (DOORBELL_RETENTION_DAYS), not "soon"',
    );
  });
});
