// Behind a balancer a client cannot choose its own rate-limit bucket. `doorbell serve` believes one
// forwarding header, the one its proxy writes (`--client-address-header`, X-Forwarded-For by
// default), and never reads the other, which a proxy passes through as the client sent it. Here a
// real proxy on loopback appends the client's address like nginx's `$proxy_add_x_forwarded_for`
// (or, in forwarded mode, writes RFC 7239 Forwarded) and passes the other header on untouched; a
// client sends a fresh spoofed address in both headers on every request, and the limits on client
// registrations and on new MCP sessions still hold. A second client behind the same proxy has a
// bucket of its own, so the holder does read the proxy's word (not one bucket for the proxy).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo, serving } from "./command-harness.js";
import { startRoundRobinProxy } from "./round-robin-proxy.js";

const REGISTRATIONS = 3;
const SESSIONS = 5;

/** A client of the proxy whose connections come from `address` (any of 127.0.0.0/8). */
function clientFrom(address: string) {
  const dispatcher = new Agent({ localAddress: address });
  let n = 0;
  /** Both forwarding headers, each naming an address never used before. */
  const spoofed = () => {
    n++;
    return {
      forwarded: `for=198.51.${n}.${n}`,
      "x-forwarded-for": `203.0.${n}.${n}`,
    };
  };
  return {
    dispatcher,
    async register(origin: string): Promise<number> {
      const answer = await request(`${origin}/oauth/reg`, {
        method: "POST",
        dispatcher,
        headers: { "content-type": "application/json", ...spoofed() },
        body: JSON.stringify({
          client_name: "Spoofing assistant",
          redirect_uris: ["http://127.0.0.1:9/callback"],
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code"],
          response_types: ["code"],
          application_type: "native",
        }),
      });
      await answer.body.dump();
      return answer.statusCode;
    },
    /** Opens a 2025-11-25 MCP session (the kind the `mcp.session` limit counts). */
    async openSession(origin: string): Promise<number> {
      const answer = await request(`${origin}/mcp`, {
        method: "POST",
        dispatcher,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...spoofed(),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "spoofer", version: "1" },
          },
        }),
      });
      await answer.body.dump();
      return answer.statusCode;
    },
  };
}

const clients = [clientFrom("127.0.0.2"), clientFrom("127.0.0.3")];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispatcher.close()));
});
const [alice, bob] = clients as [ReturnType<typeof clientFrom>, ReturnType<typeof clientFrom>];

async function statuses(times: number, call: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push(await call());
  return out;
}

const expected = (allowed: number, tried: number, ok: number) => [
  ...Array<number>(allowed).fill(ok),
  ...Array<number>(tried - allowed).fill(429),
];

/** `doorbell serve` behind the proxy, limits low; `check` gets the proxy's origin. */
async function behindProxy(
  header: "x-forwarded-for" | "forwarded",
  flags: string[],
  check: (origin: string) => Promise<void>,
  env: Record<string, string> = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), "doorbell-client-address-"));
  return serving(
    [
      "--port",
      "0",
      "--public-url",
      "http://127.0.0.1:1",
      "--data-dir",
      dataDir,
      "--no-demo",
      "--trust-proxy",
      "127.0.0.1/32",
      "--limit",
      `oauth.register=${REGISTRATIONS}/600`,
      "--limit",
      `mcp.session=${SESSIONS}/600`,
      ...flags,
    ],
    async (holderOrigin) => {
      const proxy = await startRoundRobinProxy([holderOrigin], { header });
      try {
        await check(proxy.url);
      } finally {
        await proxy.close();
      }
    },
    { DOORBELL_LOG_LEVEL: "silent", ...env },
  );
}

describe("doorbell serve behind a proxy: the client address comes from the header the proxy writes", () => {
  it("X-Forwarded-For (the default): a spoofed Forwarded or X-Forwarded-For buys no new bucket", async () => {
    const { code, out } = await behindProxy("x-forwarded-for", [], async (origin) => {
      expect(await statuses(REGISTRATIONS + 3, () => alice.register(origin))).toEqual(
        expected(REGISTRATIONS, REGISTRATIONS + 3, 201),
      );
      expect(await statuses(SESSIONS + 3, () => alice.openSession(origin))).toEqual(
        expected(SESSIONS, SESSIONS + 3, 200),
      );
      // Another client behind the same proxy has a bucket of its own.
      expect(await bob.register(origin)).toBe(201);
      expect(await bob.openSession(origin)).toBe(200);
    });
    expect(code).toBe(0);
    expect(out).toMatch(
      /Client address +from X-Forwarded-For when sent by 127\.0\.0\.1\/32; Forwarded is ignored \(--client-address-header\)/,
    );
  }, 120_000);

  it("Forwarded, chosen by its variable: a spoofed X-Forwarded-For or Forwarded buys no new bucket", async () => {
    const { code, out } = await behindProxy(
      "forwarded",
      [],
      async (origin) => {
        expect(await statuses(REGISTRATIONS + 3, () => alice.register(origin))).toEqual(
          expected(REGISTRATIONS, REGISTRATIONS + 3, 201),
        );
        expect(await bob.register(origin)).toBe(201);
      },
      { DOORBELL_CLIENT_ADDRESS_HEADER: "Forwarded" },
    );
    expect(code).toBe(0);
    expect(out).toMatch(
      /Client address +from Forwarded when sent by 127\.0\.0\.1\/32; X-Forwarded-For is ignored/,
    );
  }, 120_000);

  it("--client-address-header takes x-forwarded-for or forwarded, says so in --help, and refuses anything else", async () => {
    const help = captureIo();
    expect(await run(["serve", "--help"], help.io)).toBe(0);
    expect(help.out()).toMatch(/--client-address-header H\s+the one header those proxies write/);
    expect(help.out()).toContain("DOORBELL_CLIENT_ADDRESS_HEADER");

    const wrong = captureIo({ DOORBELL_DATA_DIR: mkdtempSync(join(tmpdir(), "doorbell-cli-")) });
    expect(await run(["serve", "--client-address-header", "x-real-ip"], wrong.io)).toBe(2);
    expect(wrong.err()).toMatch(/--client-address-header: .*x-forwarded-for or forwarded/);
  });
});
