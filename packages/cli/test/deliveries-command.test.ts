// `doorbell deliveries list|show|replay` (issue #17) on the database a holder's delivery engine
// writes: a real endpoint refuses a doorbell with 413, the log shows it dead-lettered with its
// category and time, replay queues it again and the engine delivers it with the same webhook-id.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createDeliveryEngine, type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const DAY = 86_400_000;

async function endpoint() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const control = { script: [] as number[] };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const json = JSON.parse(body) as { type?: string; challenge?: string };
      if (json.type === "verification" && typeof json.challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ challenge: json.challenge }));
      }
      received.push({ headers: req.headers, body });
      res.writeHead(control.script.shift() ?? 200).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/CANARYPATH-deliveries`,
    received,
    control,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("lists, shows and replays a dead-lettered doorbell; no secret or endpoint is printed", async () => {
    const database = await fixture.createDatabase();
    const store = database.db as unknown as Database<DeliveryTables>;
    await migrate(store, [deliveryMigrations]);
    const engine = createDeliveryEngine({
      store,
      sealer: createSealer(new Keyring([generateKeyEntry()])),
      policy: developmentPolicy({ timeoutMs: 2_000 }),
    });
    const agent = await endpoint();
    try {
      const secret = generateSecret();
      // An MCP Events subscription on the Standard Webhooks wire: 413 drops that one event (a
      // dead letter on a live subscription); the push profile would retry it (issue 16 item 13).
      const sub = await engine.subscribe(store.db, {
        channel: "mcp-standard",
        subscriberId: "5d1f0c7a-2b1e-4a7e-9c55-0f4f3e2a9b10",
        url: agent.url,
        secret,
        expiresAt: Date.now() + 30 * DAY,
        refreshBefore: Date.now() + 27 * DAY,
        requiresApproval: false,
      });
      await engine.runDue();
      agent.control.script = [413];
      await store.transaction((trx) =>
        engine.enqueue(trx, sub.id, { type: "incident.created", eventId: "evt_413", data: { n: 1 } }),
      );
      await engine.runDue();
      expect(agent.received).toHaveLength(1);

      const where = ["--database", database.url];
      const list = captureIo();
      expect(await run(["deliveries", "list", ...where], list.io)).toBe(0);
      expect(list.out()).toMatch(
        /^SUBSCRIPTION\s+CHANNEL\s+STATUS\s+LAST DELIVERED\s+LAST ERROR\s+NEXT ATTEMPT\s+QUEUED\s+DEAD/,
      );
      expect(list.out()).toContain(sub.id);
      expect(list.out()).toMatch(new RegExp(`${sub.id}\\s+mcp-standard\\s+active\\s+never\\s+http_4xx`));

      const dead = captureIo();
      expect(await run(["deliveries", "list", "--dead", "--json", ...where], dead.io)).toBe(0);
      const [entry] = JSON.parse(dead.out()) as { id: string; deadLetters: number }[];
      expect(entry).toMatchObject({ id: sub.id, deadLetters: 1 });

      const show = captureIo();
      expect(await run(["deliveries", "show", sub.id, ...where], show.io)).toBe(0);
      expect(show.out()).toContain("Recent failed attempts");
      expect(show.out()).toMatch(/event\s+#1\s+http_4xx \(HTTP 413\)\s+incident\.created evt_413/);
      const deadId = /(dlq_[0-9A-Za-z]+)\s+incident\.created\s+too-large after 1 attempt/.exec(
        show.out(),
      )?.[1];
      expect(deadId).toBeDefined();
      expect(show.out()).toContain(`body ${agent.received[0]?.body}`);

      const printed = list.out() + dead.out() + show.out();
      for (const leak of [secret, secret.slice(6), agent.url, "CANARYPATH", new URL(agent.url).host]) {
        expect(printed).not.toContain(leak);
      }

      const replay = captureIo();
      expect(await run(["deliveries", "replay", deadId as string, ...where], replay.io)).toBe(0);
      expect(replay.out()).toContain(`replayed ${deadId}: incident.created`);
      await engine.runDue();
      expect(agent.received).toHaveLength(2);
      expect(agent.received[1]?.headers["webhook-id"]).toBe(agent.received[0]?.headers["webhook-id"]);
      expect(agent.received[1]?.body).toBe(agent.received[0]?.body);

      const again = captureIo();
      expect(await run(["deliveries", "replay", deadId as string, ...where], again.io)).toBe(1);
      expect(again.err()).toMatch(
        /^doorbell deliveries: dlq_\w+ was replayed at .*\(ERR_DELIVERY_ALREADY_REPLAYED\)\n$/,
      );
      const unknown = captureIo();
      expect(await run(["deliveries", "show", "sub_nope", ...where], unknown.io)).toBe(1);
      expect(unknown.err()).toBe(
        "doorbell deliveries: no such subscription (ERR_DELIVERY_UNKNOWN_SUBSCRIPTION)\n",
      );
    } finally {
      await agent.close();
    }
  });
});

describe("doorbell deliveries usage", () => {
  it("says what is wrong in one line and exits 2", async () => {
    for (const [args, message] of [
      [["deliveries"], "say doorbell deliveries list, show, replay or prune"],
      [["deliveries", "forget"], 'unknown deliveries action "forget"'],
      [["deliveries", "show"], "show takes one subscription id"],
      [["deliveries", "replay", "a", "b"], "replay takes one dead letter id (dlq_…)"],
      [["deliveries", "list", "--status", "gone"], "--status is one of"],
      [["deliveries", "list", "--limit", "0"], "--limit is a whole number"],
      [["deliveries", "list", "--database", "mysql://x/y"], "--database takes a postgres:// URL"],
    ] as const) {
      const io = captureIo();
      expect(await run([...args], io.io)).toBe(2);
      expect(io.err()).toContain(message);
      expect(io.err()).toContain("see `doorbell deliveries --help`");
      expect(io.err().split("\n")).toHaveLength(3);
    }
    const missing = captureIo();
    expect(await run(["deliveries", "list", "--data-dir", "/nonexistent/doorbell"], missing.io)).toBe(1);
    expect(missing.err()).toBe(
      "doorbell deliveries: no holder database at /nonexistent/doorbell/holder.sqlite: give --data-dir or --database as for doorbell serve\n",
    );
    const help = captureIo();
    expect(await run(["deliveries", "--help"], help.io)).toBe(0);
    expect(help.out()).toContain("doorbell deliveries replay DEAD_LETTER_ID");
  });
});
