// `doorbell endpoints list|show|enable` on the database a delivery engine writes: real receivers on
// loopback refuse every attempt until the engine disables their endpoints (an Events subscription
// is suspended, a push subscription ends); the CLI shows their health, enables the Events one and
// refuses to enable the ended push one. Nothing printed names an endpoint, a secret, or the
// operator's webhook.
import { once } from "node:events";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createDeliveryEngine, type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointDisableAfterSetting, operatorWebhookSetting } from "../src/commands/holder-config.js";
import { run } from "../src/main.js";
import { captureIo, freePort, serving } from "./command-harness.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A receiver that answers challenges and gives every doorbell `control.status`. */
async function receiver(tag: string) {
  const control = { status: 503, received: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type?: string;
        challenge?: string;
        data?: { challenge?: string };
      };
      const challenge = json.type === "verification" ? json.challenge : json.data?.challenge;
      if (typeof challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge }));
      }
      control.received++;
      res.writeHead(control.status).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/CANARY-${tag}`,
    control,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("lists and shows endpoint health, enables a disabled Events endpoint, refuses an ended push one; never a URL or secret", async () => {
    const database = await fixture.createDatabase();
    const store = database.db as unknown as Database<DeliveryTables>;
    await migrate(store, [deliveryMigrations]);
    // The engine's clock runs two hours behind the CLI's, and catches up while the endpoints fail.
    let now = Date.now() - 2 * HOUR;
    const engine = createDeliveryEngine({
      store,
      sealer: createSealer(new Keyring([generateKeyEntry()])),
      policy: developmentPolicy({ timeoutMs: 2_000 }),
      clock: () => now,
      endpointHealth: { disableAfterMs: 30 * MINUTE },
      events: { suspendAfterMs: DAY, suspendAfterFailures: 1_000 },
    });
    const events = await receiver("events");
    const push = await receiver("push");
    const operator = await receiver("operator");
    operator.control.status = 204;
    try {
      const operatorSecret = generateSecret();
      await engine.configureOperatorWebhook({ url: operator.url, secret: operatorSecret });
      const secrets = { events: generateSecret(), push: generateSecret() };
      const lease = { expiresAt: now + 20 * DAY, refreshBefore: now + 10 * DAY, requiresApproval: false };
      const eventsSub = await engine.subscribe(store.db, {
        channel: "mcp-standard",
        subscriberId: "7c1b2a3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        url: events.url,
        secret: secrets.events,
        ...lease,
      });
      const pushSub = await engine.subscribe(store.db, {
        channel: "push",
        url: push.url,
        secret: secrets.push,
        ...lease,
      });
      await engine.runDue();
      // A doorbell for each every ten minutes, all refused, until both endpoints are disabled.
      for (let n = 1; n <= 12; n++) {
        await store.transaction(async (trx) => {
          await engine.enqueue(trx, eventsSub.id, {
            type: "incident.created",
            eventId: `evt_${n}`,
            data: { n },
          });
          await engine.enqueue(trx, pushSub.id, { type: "intent.status.changed", data: { n } });
        });
        await engine.runDue();
        now += 10 * MINUTE;
      }
      expect((await engine.get(store.db, eventsSub.id)).deliveryStatus.active).toBe(false);
      expect(await engine.get(store.db, pushSub.id)).toMatchObject({
        status: "ended",
        endedReason: "delivery-failed",
      });

      const where = ["--database", database.url];
      const list = captureIo();
      expect(await run(["endpoints", "list", ...where], list.io)).toBe(0);
      expect(list.out()).toMatch(/^SUBSCRIPTION\s+CHANNEL\s+STATE\s+OK\s+FAILED\s+LAST ERROR\s+LAST SUCCESS/);
      expect(list.out()).toMatch(
        new RegExp(
          `${eventsSub.id}\\s+mcp-standard\\s+disabled \\S+ \\(failing-too-long\\)\\s+0\\s+\\d+\\s+http_5xx\\s+never`,
        ),
      );
      expect(list.out()).toMatch(new RegExp(`${pushSub.id}\\s+push\\s+disabled \\S+ \\(failing-too-long\\)`));
      expect(list.out()).toMatch(/sub_operator_webhook\s+operator\s+healthy\s+[1-9]/);

      const disabled = captureIo();
      expect(await run(["endpoints", "list", "--disabled", "--json", ...where], disabled.io)).toBe(0);
      const entries = JSON.parse(disabled.out()) as { id: string; health: Record<string, unknown> }[];
      expect(entries.map((entry) => entry.id).sort()).toEqual([eventsSub.id, pushSub.id].sort());
      expect(entries.find((entry) => entry.id === eventsSub.id)?.health).toMatchObject({
        state: "disabled",
        successes: 0,
        lastErrorCategory: "http_5xx",
        lastSuccessAt: null,
        disabledReason: "failing-too-long",
      });

      const show = captureIo();
      expect(await run(["endpoints", "show", eventsSub.subscriberId, ...where], show.io)).toBe(0);
      expect(show.out()).toContain(`Endpoint of ${eventsSub.id} (mcp-standard`);
      expect(show.out()).toMatch(/State\s+disabled .* \(failing-too-long\)/);
      expect(show.out()).toMatch(/Attempts\s+0 succeeded, \d+ failed since /);
      expect(show.out()).toContain(`doorbell endpoints enable ${eventsSub.id}`);
      const showPush = captureIo();
      expect(await run(["endpoints", "show", pushSub.id, ...where], showPush.io)).toBe(0);
      expect(showPush.out()).toContain("the agent must subscribe again");

      const refused = captureIo();
      expect(await run(["endpoints", "enable", pushSub.id, ...where], refused.io)).toBe(1);
      expect(refused.err()).toMatch(
        /^doorbell endpoints: the push subscription ended \(delivery-failed\) and an ended push subscription is final: the agent must subscribe again .*\(ERR_DELIVERY_SUBSCRIPTION_ENDED\)\n$/,
      );

      events.control.status = 200;
      const enable = captureIo();
      expect(await run(["endpoints", "enable", eventsSub.id, ...where], enable.io)).toBe(0);
      expect(enable.out()).toContain(`enabled ${eventsSub.id}: delivery resumes`);
      now = Date.now();
      await engine.runDue();
      const after = captureIo();
      expect(await run(["endpoints", "show", eventsSub.id, "--json", ...where], after.io)).toBe(0);
      const health = (JSON.parse(after.out()) as { health: Record<string, unknown> }).health;
      expect(health).toMatchObject({ state: "healthy", disabledAt: null, lastErrorCategory: null });
      expect(health.successes).toBeGreaterThan(0);
      const again = captureIo();
      expect(await run(["endpoints", "enable", eventsSub.id, ...where], again.io)).toBe(0);
      expect(again.out()).toBe(`${eventsSub.id} is not suspended: nothing to enable.\n`);

      const unknown = captureIo();
      expect(await run(["endpoints", "show", "nosuch", ...where], unknown.io)).toBe(1);
      expect(unknown.err()).toBe(
        'doorbell endpoints: no endpoint "nosuch": doorbell endpoints list shows their subscription ids (ERR_DELIVERY_UNKNOWN_SUBSCRIPTION)\n',
      );

      const printed = [list, disabled, show, showPush, refused, enable, after, again, unknown]
        .map((io) => io.out() + io.err())
        .join("\n");
      for (const leak of [
        ...Object.values(secrets),
        operatorSecret,
        operatorSecret.slice(6),
        events.url,
        push.url,
        operator.url,
        "CANARY",
        new URL(events.url).host,
      ]) {
        expect(printed).not.toContain(leak);
      }
    } finally {
      await Promise.all([events.close(), push.close(), operator.close()]);
    }
  });
});

describe("doorbell endpoints and serve's endpoint settings: bad input", () => {
  it("says what is wrong in one line and exits 2", async () => {
    for (const [args, message] of [
      [["endpoints"], "say doorbell endpoints list, show or enable"],
      [["endpoints", "show"], "show takes one subscription id"],
      [["endpoints", "enable", "a", "b"], "enable takes one subscription id"],
      [["endpoints", "list", "--channel", "email"], "--channel is one of push, mcp, mcp-standard, operator"],
      [["endpoints", "list", "--limit", "0"], "--limit is a whole number"],
      [
        ["serve", "--endpoint-disable-after", "5"],
        "--endpoint-disable-after takes a whole number and a unit",
      ],
      [["serve", "--endpoint-disable-after", "30s"], "from 1m to 365d"],
      [["serve", "--endpoint-disable-after", "400d"], '(DOORBELL_ENDPOINT_DISABLE_AFTER), not "400d"'],
      [["serve", "--operator-webhook", "ftp://ops.example/hook"], "--operator-webhook takes an http(s) URL"],
    ] as const) {
      const io = captureIo();
      expect(await run([...args], io.io)).toBe(2);
      expect(io.err()).toContain(message);
      expect(io.err().split("\n")).toHaveLength(3);
    }
  });

  it("reads the disable-after and the operator webhook's secret from flags, files and variables", async () => {
    const { io } = captureIo({ DOORBELL_ENDPOINT_DISABLE_AFTER: "12h" });
    expect(endpointDisableAfterSetting({}, io)).toEqual({ ms: 12 * HOUR, text: "12h" });
    expect(endpointDisableAfterSetting({ "endpoint-disable-after": "2w" }, io).ms).toBe(14 * DAY);
    expect(endpointDisableAfterSetting({}, captureIo().io)).toEqual({ ms: 5 * DAY, text: "5d" });

    const secret = generateSecret();
    const dir = mkdtempSync(path.join(os.tmpdir(), "doorbell-operator-"));
    const file = path.join(dir, "secret");
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    const url = "https://ops.example/doorbell";
    expect(
      await operatorWebhookSetting({ "operator-webhook": url, "operator-webhook-secret-file": file }, io),
    ).toEqual({
      url,
      secret,
      secretFrom: `file ${file}`,
    });
    const fromEnv = captureIo({
      DOORBELL_OPERATOR_WEBHOOK: url,
      DOORBELL_OPERATOR_WEBHOOK_SECRET: secret,
    }).io;
    expect(await operatorWebhookSetting({}, fromEnv)).toMatchObject({ url, secret });
    expect(await operatorWebhookSetting({ "operator-webhook": url }, captureIo().io)).toEqual({
      url,
      secretFrom: "kept by the holder",
    });
    expect(await operatorWebhookSetting({}, captureIo().io)).toBeUndefined();
    await expect(
      operatorWebhookSetting(
        { "operator-webhook": url, "operator-webhook-secret-file": path.join(dir, "none") },
        io,
      ),
    ).rejects.toThrow(/no file at/);
    const badSecret = captureIo({ DOORBELL_OPERATOR_WEBHOOK_SECRET: "hunter2" }).io;
    await expect(operatorWebhookSetting({ "operator-webhook": url }, badSecret)).rejects.toThrow(
      /must be whsec_ followed by base64/,
    );
    await expect(operatorWebhookSetting({}, badSecret)).rejects.toThrow(/no --operator-webhook URL/);
  });
});

describe("doorbell serve --operator-webhook", () => {
  it("generates the signing secret once, keeps it sealed in the database and in the data directory, and says so; the next start keeps it", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "doorbell-operator-serve-"));
    const url = "http://127.0.0.1:9/ops/CANARY-hook";
    const start = async () =>
      serving(
        [
          "--port",
          String(await freePort()),
          "--no-demo",
          "--data-dir",
          dataDir,
          "--operator-webhook",
          url,
          "--endpoint-disable-after",
          "36h",
        ],
        async () => {},
        { DOORBELL_LOG_LEVEL: "warn" },
      );
    const first = await start();
    const file = path.join(dataDir, "operator-webhook-secret");
    const secret = readFileSync(file, "utf8").trim();
    expect(secret).toMatch(/^whsec_/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.out).toMatch(
      new RegExp(
        `Operator webhook\\s+http://127\\.0\\.0\\.1:9 \\(Standard Webhooks, a new signing secret, written to ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)`,
      ),
    );
    expect(first.out).toMatch(/Endpoint health\s+an endpoint failing every attempt for 36h is disabled/);
    const second = await start();
    expect(second.out).toMatch(
      /Operator webhook\s+http:\/\/127\.0\.0\.1:9 \(Standard Webhooks, the signing secret kept from an earlier start\)/,
    );
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    for (const printed of [first.out + first.err, second.out + second.err]) {
      expect(printed).not.toContain(secret);
      expect(printed).not.toContain("CANARY");
    }
    const off = await serving(
      ["--port", String(await freePort()), "--no-demo", "--data-dir", dataDir],
      async () => {},
      {
        DOORBELL_LOG_LEVEL: "warn",
      },
    );
    expect(off.out).toMatch(/Operator webhook\s+off \(--operator-webhook URL sends/);
  });
});
