// Issue #16 item 1, DNS rebinding against the person's pages: one Host allow-list for every route
// (pages, sign-in, the OAuth server's own routes, /mcp, the documents), checked before any handler;
// the dev mailbox only under the unguessable path the start-up summary prints. Both engines, a
// whole holder on loopback, requests sent with a raw Host header as a rebinding browser sends them.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { createHostAllowList } from "../../src/html/host-guard.js";

/** One request with exactly these headers (fetch would set Host itself). */
function raw(
  port: number,
  pathname: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: pathname, method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

const ROUTES = [
  "/",
  "/consent/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "/confirm/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "/manage/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "/notifications/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "/check",
  "/signin/abcdefghijkl",
  "/oauth/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server/oauth",
  "/.well-known/isto-intents.json",
];

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let holder: Holder;
  let port: number;
  let dir: string;
  let mailboxPath: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-host-guard-"));
    holder = await createHolder({
      dataDir: dir,
      database: engine.url,
      publicUrl: "https://intents.example.sk",
      env: {},
      log: pino({ level: "silent" }),
      events: false,
    });
    ({ port } = await holder.listen(0, "127.0.0.1"));
    mailboxPath = new URL(holder.summary.mailboxUrl as string).pathname;
  }, 120_000);
  afterAll(async () => {
    await holder?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers no route for a rebinding host name, before any handler", async () => {
    for (const route of [...ROUTES, mailboxPath]) {
      const answer = await raw(port, route, { host: `rebind.attacker.example:${port}` });
      expect(answer.status, route).toBe(403);
      expect(answer.body, route).toBe(
        "This server does not answer for that host name (DNS rebinding protection).\n",
      );
    }
    const mcp = await raw(
      port,
      "/mcp",
      {
        host: `rebind.attacker.example:${port}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      "POST",
    );
    expect(mcp.status).toBe(403);
    expect(JSON.parse(mcp.body).error.message).toMatch(/DNS rebinding/);
    // A POST to the withdraw form is refused the same way (the attack of the issue).
    const withdraw = await raw(
      port,
      "/manage/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/withdraw",
      { host: `rebind.attacker.example:${port}`, origin: `http://rebind.attacker.example:${port}` },
      "POST",
    );
    expect(withdraw.status).toBe(403);
  });

  it("answers the health probes of a balancer whatever Host it sends (they carry nothing)", async () => {
    const answer = await raw(port, "/healthz", { host: `10.0.0.7:${port}` });
    expect(answer.status).toBe(200);
    expect((await raw(port, "/healthz", { host: "rebind.attacker.example" }, "POST")).status).toBe(403);
    // The exemption is the health routes the router matched, not a path that looks like one.
    expect((await raw(port, "/readyz", { host: "rebind.attacker.example" }, "HEAD")).status).not.toBe(403);
    for (const path of ["/healthz/", "/HEALTHZ", "/healthz%2F"]) {
      expect((await raw(port, path, { host: "rebind.attacker.example" })).status, path).toBe(403);
    }
  });

  it("serves the public URL's host and, listening on loopback, the loopback names", async () => {
    for (const host of [
      "intents.example.sk",
      "INTENTS.example.sk.",
      `127.0.0.1:${port}`,
      `localhost:${port}`,
    ]) {
      const answer = await raw(port, "/check", { host });
      expect(answer.status, host).toBe(200);
      const metadata = await raw(port, "/oauth/.well-known/openid-configuration", { host });
      expect(metadata.status, host).toBe(200);
    }
    for (const host of ["intents.example.sk.evil.example", "evil-intents.example.sk", "127.0.0.1.nip.io"]) {
      expect((await raw(port, "/check", { host })).status, host).toBe(403);
    }
  });

  it("keeps the dev mailbox under the unguessable path of the summary only", async () => {
    expect(mailboxPath).toMatch(/^\/dev\/mailbox\/[A-Za-z0-9]{32}$/);
    const host = `127.0.0.1:${port}`;
    expect((await raw(port, mailboxPath, { host })).status).toBe(200);
    expect((await raw(port, "/dev/mailbox", { host })).status).toBe(404);
    expect((await raw(port, "/dev/mailbox/1", { host })).status).toBe(404);
    // The root page no longer tells where it is.
    expect((await raw(port, "/", { host })).body).not.toContain("/dev/mailbox");
  });
});

describe("host allow-list", () => {
  it("allows loopback names only when the holder is reached on loopback", () => {
    let listening = false;
    const allowed = createHostAllowList({
      publicUrl: "https://intents.example.sk",
      allowedHosts: ["second.example.sk"],
      loopback: () => listening,
    });
    expect(allowed("intents.example.sk:443")).toBe(true);
    expect(allowed("second.example.sk")).toBe(true);
    expect(allowed("localhost:8080")).toBe(false);
    listening = true;
    expect(allowed("localhost:8080")).toBe(true);
    expect(allowed("[::1]:8080")).toBe(true);
    expect(allowed(undefined)).toBe(false);
    expect(allowed("")).toBe(false);
    expect(allowed("intents.example.sk:x")).toBe(false);
    // A loopback public URL allows the loopback names without listening.
    expect(createHostAllowList({ publicUrl: "http://127.0.0.1:8080" })("localhost:9")).toBe(true);
  });
});
