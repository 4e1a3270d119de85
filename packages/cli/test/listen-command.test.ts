// `doorbell listen` (issue #17): the real delivery engine subscribes it as an endpoint; listen
// answers the challenge, verifies every doorbell with the given secret, prints headers, the
// verification result and the body, and forwards verified doorbells byte for byte to a local
// receiver (which verifies them too). A forged request is refused and not forwarded.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createDeliveryEngine, type DeliveryTables, deliveryMigrations } from "@doorbell/delivery";
import { createSealer, type Database, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import {
  createMcpSigner,
  createStandardSigner,
  createStandardVerifier,
  developmentPolicy,
  generateSecret,
} from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenCommand } from "../src/commands/listen.js";
import { run } from "../src/main.js";
import { captureIo, runUntilChecked } from "./command-harness.js";

const DAY = 86_400_000;

/** The developer's own receiver that listen forwards to: records and answers as told. */
async function localReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const control = { status: 204 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(control.status).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    control,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
}

forEachEngine({ describe, beforeAll, afterAll }, (fixture) => {
  it("answers the challenge, verifies, prints and forwards every doorbell the engine rings", async () => {
    const database = await fixture.createDatabase();
    const store = database.db as unknown as Database<DeliveryTables>;
    await migrate(store, [deliveryMigrations]);
    const engine = createDeliveryEngine({
      store,
      sealer: createSealer(new Keyring([generateKeyEntry()])),
      policy: developmentPolicy({ timeoutMs: 5_000 }),
    });
    const secret = generateSecret();
    const target = await localReceiver();
    const out = captureIo();
    try {
      const { code, failure } = await runUntilChecked<string>(
        (until, ready) =>
          listenCommand(["--listen", "127.0.0.1:0", "--secret", secret, "--forward-to", target.url], out.io, {
            until,
            onListening: ready,
          }),
        async (base) => {
          const sub = await engine.subscribe(store.db, {
            channel: "push",
            url: `${base}/doorbell`,
            secret,
            expiresAt: Date.now() + 30 * DAY,
            refreshBefore: Date.now() + 27 * DAY,
            requiresApproval: false,
          });
          await engine.runDue();
          expect((await engine.get(store.db, sub.id)).status).toBe("active");
          expect(out.out()).toContain("challenge: answered (push-profile)");
          expect(target.received).toHaveLength(0);

          await store.transaction((trx) =>
            engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { status: "active" } }),
          );
          await engine.runDue();
          await waitFor("the forwarded doorbell", () => target.received.length === 1);
          const forwarded = target.received[0];
          // Byte for byte, with the signature headers: the local receiver verifies it with the secret.
          const verified = createStandardVerifier({ secrets: [secret] }).verify(
            forwarded?.headers as Record<string, string>,
            forwarded?.body ?? "",
          );
          expect(JSON.parse(forwarded?.body ?? "{}")).toMatchObject({
            type: "intent.status.changed",
            data: { status: "active" },
          });
          expect((await engine.get(store.db, sub.id)).deliveryStatus.lastError).toBeNull();
          const printed = out.out();
          expect(printed).toContain(`webhook-id: ${verified.id}`);
          expect(printed).toMatch(/webhook-signature: v1,/);
          expect(printed).toContain(`ok: v1 signature verified for webhook-id ${verified.id}`);
          expect(printed).toContain(`forwarded to ${target.url}: 204 in `);
          expect(printed).toContain('"type": "intent.status.changed"');

          // The local receiver fails: the sender is told so and retries later.
          target.control.status = 500;
          await store.transaction((trx) =>
            engine.enqueue(trx, sub.id, { type: "intent.status.changed", data: { status: "ended" } }),
          );
          await engine.runDue();
          expect((await engine.get(store.db, sub.id)).deliveryStatus.lastError).toBe("http_5xx");
          expect(out.out()).toContain(`forwarded to ${target.url}: 500 in `);

          // A forgery: printed as refused, answered 401, never forwarded.
          const before = target.received.length;
          const body = '{"type":"intent.status.changed","data":{"status":"forged"}}';
          const forged = createStandardSigner({ secrets: [generateSecret()] }).headers({
            id: "msg_forged",
            timestamp: Math.floor(Date.now() / 1000),
            body,
          });
          const answer = await fetch(`${base}/doorbell`, { method: "POST", headers: forged, body });
          expect(answer.status).toBe(401);
          expect((await answer.json()) as { error: string }).toMatchObject({
            error: "ERR_WEBHOOK_SIGNATURE_MISMATCH",
          });
          expect(target.received).toHaveLength(before);
          expect(out.out()).toMatch(
            /webhook-id: msg_forged\n[\s\S]*refused: .*\(ERR_WEBHOOK_SIGNATURE_MISMATCH\)/,
          );
          expect(out.out()).toContain('"status": "forged"');
          expect((await fetch(`${base}/doorbell`)).status).toBe(405);
        },
      );
      expect(failure).toBeUndefined();
      expect(code).toBe(0);
    } finally {
      await target.close();
    }
  });
});

describe("doorbell listen", () => {
  it("without --forward-to answers 200 itself; a forward target that is down gets 502 and the reason", async () => {
    const secret = generateSecret();
    const out = captureIo();
    const { code, failure } = await runUntilChecked<string>(
      (until, ready) =>
        listenCommand(
          ["--listen", "127.0.0.1:0", "--forward-to", "http://127.0.0.1:9/nothing"],
          {
            ...out.io,
            env: { DOORBELL_WEBHOOK_SECRET: secret },
          },
          { until, onListening: ready },
        ),
      async (base) => {
        const body = '{"type":"intent.matches.delivered","data":{"newMatches":2}}';
        const headers = createStandardSigner({ secrets: [secret] }).headers({
          id: "msg_one",
          timestamp: Math.floor(Date.now() / 1000),
          body,
        });
        const answer = await fetch(`${base}/x`, { method: "POST", headers, body });
        expect(answer.status).toBe(502);
        // Issue 30 item 7: the cause's words (fetch refuses port 9), not fetch's "TypeError".
        expect(out.out()).toMatch(
          /forwarded to http:\/\/127\.0\.0\.1:9\/nothing: failed \(bad port\); answered 502/,
        );
        // The same id again: noted as a retry or replay.
        await fetch(`${base}/x`, { method: "POST", headers, body });
        expect(out.out()).toContain("note: this webhook-id came before");
      },
    );
    expect(failure).toBeUndefined();
    expect(code).toBe(0);

    const plain = captureIo();
    const result = await runUntilChecked<string>(
      (until, ready) =>
        listenCommand(["--listen", "127.0.0.1:0", "--secret", secret], plain.io, {
          until,
          onListening: ready,
        }),
      async (base) => {
        const body = '{"type":"intent.status.changed","data":{"status":"active"}}';
        const headers = createStandardSigner({ secrets: [secret] }).headers({
          id: "msg_two",
          timestamp: Math.floor(Date.now() / 1000),
          body,
        });
        const answer = await fetch(`${base}/doorbell`, { method: "POST", headers, body });
        expect(answer.status).toBe(200);
        expect(plain.out()).toContain("ok: v1 signature verified for webhook-id msg_two");
      },
    );
    expect(result.failure).toBeUndefined();
  });

  it("verifies the MCP Events scheme (X-MCP-*) and answers its verification challenge", async () => {
    const secret = generateSecret();
    const out = captureIo();
    const { failure } = await runUntilChecked<string>(
      (until, ready) =>
        listenCommand(["--listen", "127.0.0.1:0", "--scheme", "mcp", "--secret", secret], out.io, {
          until,
          onListening: ready,
        }),
      async (base) => {
        const signer = createMcpSigner(secret);
        const timestamp = Math.floor(Date.now() / 1000);
        const challenge = JSON.stringify({ type: "verification", id: "sub-mcp-1", challenge: "c-123" });
        const answer = await fetch(`${base}/events`, {
          method: "POST",
          headers: signer.headers({ subscriptionId: "sub-mcp-1", timestamp, body: challenge }),
          body: challenge,
        });
        expect(await answer.json()).toEqual({ challenge: "c-123" });
        const event = JSON.stringify({
          id: "sub-mcp-1",
          eventId: "evt_1",
          name: "incident.created",
          data: {},
        });
        const delivered = await fetch(`${base}/events`, {
          method: "POST",
          headers: signer.headers({ subscriptionId: "sub-mcp-1", timestamp, body: event }),
          body: event,
        });
        expect(delivered.status).toBe(200);
        expect(out.out()).toContain("challenge: answered (mcp-events)");
        expect(out.out()).toContain("ok: X-MCP-Signature verified for subscription sub-mcp-1");
        expect(out.out()).toContain('"eventId": "evt_1"');
      },
    );
    expect(failure).toBeUndefined();
  });

  it("a refusal names the other scheme's headers it saw; what the sender wrote is printed, never obeyed", async () => {
    const secret = generateSecret();
    const out = captureIo();
    const { failure } = await runUntilChecked<string>(
      (until, ready) =>
        listenCommand(["--listen", "127.0.0.1:0", "--secret", secret], out.io, { until, onListening: ready }),
      async (base) => {
        const timestamp = Math.floor(Date.now() / 1000);
        const body = '{"type":"intent.matches.delivered","data":{"newMatches":1}}';
        // Issue 30 item 7: Svix's header names, and an MCP Events request, under the default scheme.
        const svix = Object.fromEntries(
          Object.entries(
            createStandardSigner({ secrets: [secret] }).headers({ id: "msg_svix", timestamp, body }),
          ).map(([name, value]) => [name.replace(/^webhook-/, "svix-"), value]),
        );
        expect((await fetch(`${base}/svix`, { method: "POST", headers: svix, body })).status).toBe(401);
        expect(out.out()).toContain("hint: it carries svix-id / svix-timestamp / svix-signature");
        const mcp = createMcpSigner(secret).headers({ subscriptionId: "sub-1", timestamp, body });
        expect((await fetch(`${base}/mcp`, { method: "POST", headers: mcp, body })).status).toBe(401);
        expect(out.out()).toContain("start doorbell listen with --scheme mcp");

        // Issue 29 item 6: an unsigned text body with escape sequences (retitle, clear the
        // screen, write the clipboard), a C1 control and a bidirectional override, plus a forged verdict.
        const hostile =
          "\u001b]0;pwned\u0007\u001b[2J\u001b]52;c;ZXZpbA==\u0007\u009b31m\u202eok: v1 signature verified";
        const refused = await fetch(`${base}/x`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: hostile,
        });
        expect(refused.status).toBe(401);
        const printed = out.out();
        for (const obeyed of ["\u001b", "\u0007", "\u009b", "\u202e"]) expect(printed).not.toContain(obeyed);
        expect(printed).toContain("\\u001b]0;pwned\\u0007\\u001b[2J");
        expect(printed).toContain("\\u202eok: v1 signature verified");
      },
    );
    expect(failure).toBeUndefined();
  });

  it("usage errors are one line and exit 2", async () => {
    for (const [args, message] of [
      [["listen"], "give --secret whsec_…"],
      [["listen", "--secret", "nope"], "--secret is whsec_"],
      [["listen", "--secret", generateSecret(), "--scheme", "soap"], "--scheme is standard or mcp"],
      [["listen", "--secret", generateSecret(), "--forward-to", "ftp://x"], "--forward-to takes an http://"],
      [["listen", "--secret", generateSecret(), "--listen", "8787"], "--listen is HOST:PORT"],
    ] as const) {
      const io = captureIo();
      expect(await run([...args], io.io)).toBe(2);
      expect(io.err()).toContain(message);
      expect(io.err()).toContain("see `doorbell listen --help`");
    }
  });
});
