// egressFetch: a `fetch` for client libraries (the A2A SDK) that call addresses a peer named,
// through the same guarded connector and policies as postWebhook and getJson.
import { describe, expect, it } from "vitest";
import { EgressFetchError, egressFetch, productionPolicy } from "../src/egress/index.js";
import { egressTestBed, type Handler, TEST_CERT, TEST_HOST } from "./egress-helpers.js";

const LEGIT = "127.0.0.2";
const bed = egressTestBed();
const { dns } = bed;

const serve = (handler: Handler) => bed.serve({ host: LEGIT, handler });

const policyFor = (server: { port: number }, options: { allow?: boolean; timeoutMs?: number } = {}) =>
  bed.keep(
    productionPolicy({
      port: server.port,
      ...(options.allow === false ? {} : { allowSubnets: [`${LEGIT}/32`] }),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ca: TEST_CERT,
      resolver: dns.resolver,
    }),
  );

const rejection = async (attempt: Promise<unknown>): Promise<EgressFetchError> => {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressFetchError);
  expect(error).toBeInstanceOf(TypeError);
  return error as EgressFetchError;
};

describe("egressFetch", () => {
  it("posts a JSON-RPC request and hands back the answer as a global Response", async () => {
    dns.answer([LEGIT]);
    const server = await serve((_req, res, seen) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { echoed: seen.body.toString("utf8") } }));
    });
    const fetch = egressFetch(policyFor(server));
    const answer = await fetch(`https://${TEST_HOST}:${server.port}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"message/send"}',
    });
    expect(answer).toBeInstanceOf(Response);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { echoed: '{"jsonrpc":"2.0","id":1,"method":"message/send"}' },
    });
    expect(server.requests[0]?.method).toBe("POST");
    // A Request object works too.
    const again = await fetch(
      new Request(`https://${TEST_HOST}:${server.port}/a2a`, { method: "POST", body: "{}" }),
    );
    expect(await again.json()).toMatchObject({ result: { echoed: "{}" } });
  });

  it("refuses a name that resolves to a non-public address before any connection (DNS rebinding)", async () => {
    dns.answer(["127.0.0.1"]);
    const fetch = egressFetch(policyFor(bed.honeypot, { allow: false }));
    const error = await rejection(fetch(`https://${TEST_HOST}:${bed.honeypot.port}/a2a`, { method: "POST" }));
    expect(error.category).toBe("blocked_address");
    expect(bed.honeypot.connections).toBe(0);
  });

  it("refuses a URL the policy forbids without touching the network", async () => {
    const server = await serve((_req, res) => res.end("{}"));
    const fetch = egressFetch(policyFor(server));
    for (const url of ["http://127.0.0.1/a2a", `https://${TEST_HOST}:1/a2a`, "file:///etc/passwd"]) {
      expect((await rejection(fetch(url))).category).toBe("blocked_url");
    }
    expect(dns.calls).toHaveLength(0);
  });

  it("never follows a redirect", async () => {
    dns.answer([LEGIT]);
    const server = await serve((_req, res) => {
      res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    });
    const error = await rejection(egressFetch(policyFor(server))(`https://${TEST_HOST}:${server.port}/a2a`));
    expect(error.category).toBe("http_3xx");
    expect(server.requests).toHaveLength(1);
  });

  it("errors a body longer than the cap, declared or streamed", async () => {
    dns.answer([LEGIT]);
    const declared = await serve((_req, res) => res.end("x".repeat(2_000)));
    const fetch = egressFetch(policyFor(declared), { maxBytes: 1_000 });
    expect((await rejection(fetch(`https://${TEST_HOST}:${declared.port}/`))).category).toBe("too_large");
    const streamed = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("x".repeat(800));
      res.end("x".repeat(800));
    });
    const answer = await egressFetch(policyFor(streamed), { maxBytes: 1_000 })(
      `https://${TEST_HOST}:${streamed.port}/`,
    );
    expect((await rejection(answer.text())).category).toBe("too_large");
  });

  it("gives up at the policy's deadline", async () => {
    dns.answer([LEGIT]);
    const silent = await serve(() => {});
    const fetch = egressFetch(policyFor(silent, { timeoutMs: 300 }));
    const error = await rejection(fetch(`https://${TEST_HOST}:${silent.port}/`));
    expect(error.category).toBe("timeout");
    expect(error.message).not.toContain(TEST_HOST);
  });
});
