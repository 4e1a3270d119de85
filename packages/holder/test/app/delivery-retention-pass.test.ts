// The holder keeps its delivery log bounded by itself: its background pass (here the one it runs
// as it starts, under an injected clock) prunes failed attempts and dead letters past the ages
// createHolder({ delivery }) gives, and leaves the younger ones.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DeliveryTables } from "@doorbell/delivery";
import { asTables } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder } from "../../src/app/holder.js";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("the background pass deletes the delivery log's rows past their age, and only those", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-retention-"));
    const database = (await engine.createDatabase()).url;
    const common = {
      database,
      dataDir,
      publicUrl: "http://127.0.0.1:8080",
      env: {},
      demo: false,
      oauth: false as const,
      events: false as const,
      webhookPolicy: "development" as const,
      log: pino({ level: "silent" }),
      clock: () => NOW,
    };
    // A first holder, without background work, writes a subscription and its old log rows.
    const writer = await createHolder({ ...common, background: false });
    const db = asTables<DeliveryTables>(writer.context.store).db;
    const sub = await writer.delivery.subscribe(db, {
      channel: "mcp-standard",
      subscriberId: "5d1f0c7a-2b1e-4a7e-9c55-0f4f3e2a9b12",
      url: "http://127.0.0.1:9/hooks",
      secret: generateSecret(),
      expiresAt: NOW + 20 * DAY,
      refreshBefore: NOW + 18 * DAY,
      requiresApproval: false,
    });
    const attempt = (daysAgo: number) => ({
      subscription_id: sub.id,
      kind: "event",
      type: "intent.status.changed",
      webhook_id: `msg_${daysAgo}d`,
      attempt: 1,
      category: "timeout",
      http_status: null,
      at: NOW - daysAgo * DAY,
    });
    await db
      .insertInto("delivery_attempt_log")
      .values([attempt(12), attempt(3)])
      .execute();
    const dead = (id: string, daysAgo: number) => ({
      id,
      subscription_id: sub.id,
      webhook_id: `msg_${id}`,
      type: "intent.status.changed",
      body: "{}",
      attempts: 5,
      first_attempt_at: NOW - daysAgo * DAY,
      last_attempt_at: NOW - daysAgo * DAY,
      category: "timeout",
      reason: "retries-exhausted",
      created_at: NOW - daysAgo * DAY,
      replayed_at: null,
    });
    await db
      .insertInto("delivery_dead_letters")
      .values([dead("dlq_old", 25), dead("dlq_young", 12)])
      .execute();
    await writer.close();

    // A serving holder with a 10-day log and 20-day dead letters: its first pass prunes.
    const holder = await createHolder({
      ...common,
      delivery: { retentionMs: 10 * DAY, deadLetterRetentionMs: 20 * DAY, perHostConcurrency: 2 },
    });
    try {
      const left = asTables<DeliveryTables>(holder.context.store).db;
      expect(
        (
          await left
            .selectFrom("delivery_attempt_log")
            .select("webhook_id")
            // The serving holder's worker may meanwhile log its failed challenge to port 9.
            .where("kind", "=", "event")
            .execute()
        ).map((r) => r.webhook_id),
      ).toEqual(["msg_3d"]);
      expect(
        (await left.selectFrom("delivery_dead_letters").select("id").execute()).map((r) => r.id),
      ).toEqual(["dlq_young"]);
    } finally {
      await holder.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
