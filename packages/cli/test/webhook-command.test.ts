import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Io, run } from "../src/main.js";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const vector = {
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: "1614265330",
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const dir = mkdtempSync(join(tmpdir(), "doorbell-cli-"));

function fakeIo(stdin = "", env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    stdin: async () => new TextEncoder().encode(stdin),
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env,
    readFile: async (path) => (await import("node:fs/promises")).readFile(path),
    now: () => Number(vector.timestamp) * 1000,
    redirectedFileMode: () => undefined,
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

describe("doorbell webhook sign", () => {
  it("signs the Standard Webhooks vector from stdin", async () => {
    const t = fakeIo(vector.body);
    const code = await run(
      ["webhook", "sign", "--secret", secret, "--id", vector.id, "--timestamp", vector.timestamp],
      t.io,
    );
    expect(code).toBe(0);
    expect(t.out()).toBe(
      `webhook-id: ${vector.id}\nwebhook-timestamp: ${vector.timestamp}\nwebhook-signature: ${vector.signature}\n`,
    );
  });

  it("signs in the MCP scheme as JSON", async () => {
    const t = fakeIo("{}");
    const args = [
      "webhook",
      "sign",
      "--scheme",
      "mcp",
      "--secret",
      secret,
      "--subscription-id",
      "s1",
      "--json",
    ];
    expect(await run(args, t.io)).toBe(0);
    expect(JSON.parse(t.out())).toMatchObject({
      "x-mcp-subscription-id": "s1",
      "x-mcp-timestamp": vector.timestamp,
    });
  });

  it("takes the secret from DOORBELL_WEBHOOK_SECRET", async () => {
    const t = fakeIo(vector.body, { DOORBELL_WEBHOOK_SECRET: secret });
    expect(await run(["webhook", "sign", "--id", vector.id, "--timestamp", vector.timestamp], t.io)).toBe(0);
    expect(t.out()).toContain(vector.signature);
  });
});

describe("doorbell webhook verify: one line that says what is wrong", () => {
  const headerArgs = (signature = vector.signature) => [
    "--header",
    `webhook-id: ${vector.id}`,
    "--header",
    `webhook-timestamp: ${vector.timestamp}`,
    "--header",
    `webhook-signature: ${signature}`,
  ];

  it("ok for the vector", async () => {
    const t = fakeIo(vector.body);
    expect(await run(["webhook", "verify", "--secret", secret, ...headerArgs()], t.io)).toBe(0);
    expect(t.out()).toBe(
      `ok: v1 signature verified for webhook-id ${vector.id}, timestamp 1614265330 (0 s ago)\n`,
    );
  });

  it("names the missing header", async () => {
    const t = fakeIo(vector.body);
    const args = ["webhook", "verify", "--secret", secret, "--header", `webhook-id: ${vector.id}`];
    expect(await run(args, t.io)).toBe(1);
    expect(t.out()).toContain(
      "refused: the webhook-timestamp header is missing (ERR_WEBHOOK_MISSING_HEADER)",
    );
  });

  it("says how far out of tolerance the timestamp is", async () => {
    const t = fakeIo(vector.body);
    expect(
      await run(["webhook", "verify", "--secret", secret, "--now", "1614266000", ...headerArgs()], t.io),
    ).toBe(1);
    expect(t.out()).toContain(
      "the webhook-timestamp 1614265330 is 670 s older than this clock (tolerance ±300 s)",
    );
  });

  it("says which signature failed when the body differs by one byte", async () => {
    const t = fakeIo(`${vector.body}\n`);
    expect(await run(["webhook", "verify", "--secret", secret, ...headerArgs()], t.io)).toBe(1);
    expect(t.out()).toContain("signature 1 (v1): does not match any of the 1 secret(s)");
    expect(t.out()).toContain("body: 21 bytes");
  });

  it("verifies a saved raw request, trimming bytes past Content-Length", async () => {
    const file = join(dir, "saved.http");
    const head = [
      "POST /hooks/doorbell HTTP/1.1",
      "Host: agent.example",
      "Content-Type: application/json",
      `Content-Length: ${vector.body.length}`,
      `Webhook-Id: ${vector.id}`,
      `Webhook-Timestamp: ${vector.timestamp}`,
      `Webhook-Signature: ${vector.signature}`,
    ].join("\r\n");
    writeFileSync(file, `${head}\r\n\r\n${vector.body}\n`);
    const t = fakeIo();
    expect(await run(["webhook", "verify", "--secret", secret, "--request", file], t.io)).toBe(0);
    expect(t.err()).toContain("ignored 1 byte(s) after Content-Length");
  });

  it("usage errors exit 2 with a reason", async () => {
    for (const args of [
      ["webhook", "verify", "--secret", secret, "--header", "nocolon"],
      ["webhook", "sign", "--secret", secret, "--timestamp", "soon"],
      ["webhook", "sign", "--bogus"],
      ["webhook", "frobnicate"],
      ["webhook", "sign", "--scheme", "mqtt", "--secret", secret],
    ]) {
      const t = fakeIo("{}");
      expect(await run(args, t.io)).toBe(2);
      expect(t.err()).toMatch(/^doorbell webhook: .*\nsee `doorbell webhook --help`\n$/);
    }
  });

  it("an invalid secret is refused with its code", async () => {
    const t = fakeIo("{}");
    expect(await run(["webhook", "sign", "--secret", "whsec_short"], t.io)).toBe(1);
    expect(t.err()).toContain("ERR_WEBHOOK_INVALID_SECRET");
  });
});

describe("the doorbell process", () => {
  it("signs from stdin and verifies from a file, with exit codes", () => {
    const entry = join(import.meta.dirname, "cli-entry.ts");
    const node = (args: string[], input?: string) =>
      spawnSync(process.execPath, ["--import", "tsx", "--conditions=@doorbell/source", entry, ...args], {
        input,
        encoding: "utf8",
      });
    const signed = node(["webhook", "sign", "--secret", secret, "--id", "msg_proc"], vector.body);
    expect(signed.status).toBe(0);
    const headers = signed.stdout.trim().split("\n");
    const bodyFile = join(dir, "body.json");
    writeFileSync(bodyFile, vector.body);
    const args = ["webhook", "verify", "--secret", secret, "--body-file", bodyFile];
    const ok = node([...args, ...headers.flatMap((h) => ["--header", h])]);
    expect(ok.stdout).toMatch(/^ok: v1 signature verified for webhook-id msg_proc/);
    expect(ok.status).toBe(0);
    const bad = node([
      ...args,
      "--header",
      headers[0] as string,
      "--header",
      headers[1] as string,
      "--header",
      "webhook-signature: v1,AAAA",
    ]);
    expect(bad.status).toBe(1);
    // Three Node processes that compile TypeScript on start: slow on two loaded cores.
  }, 120_000);
});
