// What postWebhook does with what an (allowed) endpoint answers: statuses, redirects,
// Retry-After, deadlines, the 4 KB cap, TLS, refused ports, headers sent. Loopback only; these
// servers use ephemeral ports through the policy's test-only `port` option (see decisions.md).
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import {
  developmentPolicy,
  type ProductionPolicyOptions,
  postWebhook,
  productionPolicy,
} from "../src/egress/index.js";
import { isWebhookError } from "../src/errors.js";
import {
  bytes,
  closedPort,
  egressTestBed,
  type Handler,
  TEST_CERT,
  TEST_HOST,
  type TestServer,
} from "./egress-helpers.js";

const LEGIT = "127.0.0.2";
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const bed = egressTestBed();
const { dns, policies } = bed;

const serve = (handler?: Handler, host = LEGIT, tls = true) =>
  bed.serve({ host, tls, ...(handler ? { handler } : {}) });

const production = (server: { port: number }, extra: ProductionPolicyOptions = {}) => {
  dns.answer([LEGIT]);
  const policy = productionPolicy({
    port: server.port,
    allowSubnets: [`${LEGIT}/32`],
    ca: TEST_CERT,
    resolver: dns.resolver,
    now: () => NOW,
    ...extra,
  });
  return bed.keep(policy);
};

const post = (server: TestServer, extra: ProductionPolicyOptions = {}, headers?: Record<string, string>) =>
  postWebhook({
    url: `https://${TEST_HOST}:${server.port}/hook`,
    ...(headers ? { headers } : {}),
    body: bytes('{"type":"ping"}'),
    policy: production(server, extra),
  });

const answer =
  (status: number, headers: Record<string, string> = {}, body = "CANARY-BODY"): Handler =>
  (_req, res) => {
    res.writeHead(status, "CANARY-STATUS-TEXT", { ...headers, "x-canary": "CANARY-HEADER" });
    res.end(body);
  };

describe("egress: 2xx and what is sent", () => {
  it("posts the exact bytes with content-type application/json and only the caller's headers", async () => {
    const server = await serve();
    const result = await post(server, {}, { "webhook-id": "msg_1", "Webhook-Signature": "v1,abc" });
    expect(result).toMatchObject({ ok: true, status: 200, bodyTruncated: false });
    expect(new TextDecoder().decode(result.body)).toBe('{"ok":true}');
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const [seen] = server.requests;
    expect(seen?.method).toBe("POST");
    expect(seen?.url).toBe("/hook");
    expect(seen?.body.toString()).toBe('{"type":"ping"}');
    expect(seen?.headers["content-type"]).toBe("application/json");
    expect(seen?.headers["webhook-id"]).toBe("msg_1");
    expect(seen?.headers["webhook-signature"]).toBe("v1,abc");
    for (const name of ["cookie", "authorization", "proxy-authorization"])
      expect(seen?.headers).not.toHaveProperty(name);
  });

  it("keeps a content-type the caller chose, whatever its case", async () => {
    const server = await serve();
    await post(server, {}, { "Content-Type": "application/cloudevents+json" });
    expect(server.requests[0]?.headers["content-type"]).toBe("application/cloudevents+json");
  });

  it("sends authorization only when the caller passes it, and never replays a cookie", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "set-cookie": "session=stolen; Path=/", "content-type": "application/json" });
      res.end("{}");
    });
    const policy = production(server);
    const url = `https://${TEST_HOST}:${server.port}/hook`;
    await postWebhook({ url, body: bytes("{}"), policy });
    await postWebhook({
      url,
      body: bytes("{}"),
      policy,
      headers: { authorization: "Bearer caller-chose-this" },
    });
    await postWebhook({ url, body: bytes("{}"), policy });
    const [first, second, third] = server.requests;
    expect(first?.headers).not.toHaveProperty("authorization");
    expect(second?.headers.authorization).toBe("Bearer caller-chose-this");
    expect(third?.headers).not.toHaveProperty("authorization");
    for (const seen of server.requests) expect(seen.headers).not.toHaveProperty("cookie");
  });

  it("ignores HTTPS_PROXY and HTTP_PROXY from the environment", async () => {
    const server = await serve();
    const saved = { https: process.env.HTTPS_PROXY, http: process.env.HTTP_PROXY };
    process.env.HTTPS_PROXY = `http://127.0.0.1:${bed.honeypot.port}`;
    process.env.HTTP_PROXY = `http://127.0.0.1:${bed.honeypot.port}`;
    try {
      const result = await post(server);
      expect(result.ok).toBe(true);
      expect(bed.honeypot.connections).toBe(0);
    } finally {
      for (const [name, value] of [
        ["HTTPS_PROXY", saved.https],
        ["HTTP_PROXY", saved.http],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("refuses reserved headers and a body that is not bytes: caller mistakes throw", async () => {
    const server = await serve();
    const policy = production(server);
    const url = `https://${TEST_HOST}:${server.port}/`;
    const reserved: Record<string, string>[] = [
      { host: "other.test" },
      { "Transfer-Encoding": "chunked" },
      { "content-length": "1" },
      { connection: "close" },
      { "x-split": "a\r\nx-injected: 1" },
      { "bad name": "x" },
    ];
    for (const headers of reserved) {
      await expect(postWebhook({ url, headers, body: bytes("{}"), policy })).rejects.toSatisfy(
        (e: unknown) => isWebhookError(e) && e.code === "ERR_EGRESS_POLICY",
      );
    }
    await expect(postWebhook({ url, body: "{}" as unknown as Uint8Array, policy })).rejects.toSatisfy(
      isWebhookError,
    );
    expect(server.connections).toBe(0);
  });
});

describe("egress: failures by status, never followed, never echoed", () => {
  it.each([301, 302, 303, 307, 308])("%i is http_3xx and the Location is never visited", async (status) => {
    const server = await serve(
      answer(status, { location: `http://127.0.0.1:${bed.honeypot.port}/internal` }),
    );
    const result = await post(server);
    expect(result).toMatchObject({ ok: false, category: "http_3xx", status });
    expect(server.requests).toHaveLength(1);
    expect(bed.honeypot.connections).toBe(0);
  });

  it("does not follow a redirect to another path on the same allowed host either", async () => {
    const server = await serve((req, res) => {
      res.writeHead(307, { location: `https://${TEST_HOST}:${server.port}/elsewhere` });
      res.end();
      expect(req.url).toBe("/hook");
    });
    const result = await post(server);
    expect(result).toMatchObject({ ok: false, category: "http_3xx", status: 307 });
    expect(server.requests.map((r) => r.url)).toEqual(["/hook"]);
  });

  it.each<{ status: number; category?: string; headers: Record<string, string>; retryAfterSeconds?: number }>(
    [
      { status: 400, category: "http_4xx", headers: {}, retryAfterSeconds: undefined },
      { status: 410, category: "http_4xx", headers: {}, retryAfterSeconds: undefined },
      { status: 413, category: "http_4xx", headers: {}, retryAfterSeconds: undefined },
      { status: 429, category: "http_4xx", headers: { "retry-after": "120" }, retryAfterSeconds: 120 },
      {
        status: 503,
        category: "http_5xx",
        headers: { "retry-after": new Date(NOW + 30_000).toUTCString() },
        retryAfterSeconds: 30,
      },
      { status: 500, category: "http_5xx", headers: { "retry-after": "soon" }, retryAfterSeconds: undefined },
      { status: 299, category: undefined, headers: {}, retryAfterSeconds: undefined },
    ],
  )(
    "$status → $category, Retry-After $retryAfterSeconds",
    async ({ status, category, headers, retryAfterSeconds }) => {
      const server = await serve(answer(status, headers));
      const result = await post(server);
      expect(result.status).toBe(status);
      expect(result.retryAfterSeconds).toBe(retryAfterSeconds);
      if (category === undefined) {
        expect(result.ok).toBe(true);
        return;
      }
      expect(result).toMatchObject({ ok: false, category });
      // Nothing the endpoint wrote reaches the result: not its body, headers or status text.
      expect(result.body).toHaveLength(0);
      expect(JSON.stringify(result)).not.toContain("CANARY");
    },
  );
});

describe("egress: deadlines and the 4 KB cap", () => {
  it("reports a server that never answers as timeout, within the policy's deadline", async () => {
    const server = await serve(() => {});
    const started = performance.now();
    const result = await post(server, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, category: "timeout" });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
  });

  it("stops a body that drips forever at the deadline, keeping the 2xx verdict", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"challenge":');
    });
    const result = await post(server, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: true, status: 200, bodyTruncated: true });
    expect(new TextDecoder().decode(result.body)).toBe('{"challenge":');
  });

  it("reads at most 4096 bytes of a 1 MB answer", async () => {
    const big = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < big.length; i += 1) big[i] = 97 + (i % 26);
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(big);
    });
    const result = await post(server);
    expect(result).toMatchObject({ ok: true, status: 200, bodyTruncated: true });
    expect(result.body).toHaveLength(4096);
    expect(Buffer.from(result.body).equals(big.subarray(0, 4096))).toBe(true);
  });

  it("hangs up on an endless answer instead of downloading it", async () => {
    let written = 0;
    let closed = false;
    const writeForever = (res: ServerResponse) => {
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (!closed && written < 256 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once("drain", pump);
            return;
          }
        }
      };
      res.on("close", () => {
        closed = true;
      });
      pump();
    };
    const server = await serve((_req, res) => {
      res.writeHead(200);
      writeForever(res);
    });
    const result = await post(server);
    expect(result).toMatchObject({ ok: true, bodyTruncated: true });
    expect(result.body).toHaveLength(4096);
    await expect.poll(() => closed).toBe(true);
    // Loopback buffers absorb a few megabytes at most; 256 MB would mean we kept reading.
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it.each([
    [4096, false],
    [4097, true],
  ])("an answer of %i bytes is truncated: %s", async (size, truncated) => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(size, 65));
    });
    const result = await post(server);
    expect(result).toMatchObject({ ok: true, bodyTruncated: truncated });
    expect(result.body).toHaveLength(4096);
  });
});

describe("egress: network failures by category", () => {
  it("an untrusted certificate is tls_error", async () => {
    const server = await serve();
    const policy = productionPolicy({
      port: server.port,
      allowSubnets: [`${LEGIT}/32`],
      resolver: async () => [{ address: LEGIT, family: 4 }],
    });
    policies.push(policy);
    const result = await postWebhook({
      url: `https://${TEST_HOST}:${server.port}/`,
      body: bytes("{}"),
      policy,
    });
    expect(result).toMatchObject({ ok: false, category: "tls_error" });
    expect(server.requests).toHaveLength(0);
  });

  it("a certificate for another name is tls_error, without echoing the certificate's names", async () => {
    const server = await serve();
    const policy = production(server);
    const result = await postWebhook({
      url: `https://other.doorbell.test:${server.port}/`,
      body: bytes("{}"),
      policy,
    });
    expect(result).toMatchObject({ ok: false, category: "tls_error" });
    if (!result.ok) expect(result.reason).not.toContain(TEST_HOST);
    expect(server.requests).toHaveLength(0);
  });

  it("a closed port is connection_refused", async () => {
    const port = await closedPort(LEGIT);
    const result = await post({ port } as TestServer);
    expect(result).toMatchObject({ ok: false, category: "connection_refused" });
  });

  it("a resolver failure is dns_error", async () => {
    const server = await serve();
    const result = await post(server, {
      resolver: async () => {
        throw Object.assign(new Error("no such host"), { code: "ENOTFOUND" });
      },
    });
    expect(result).toMatchObject({ ok: false, category: "dns_error" });
    expect(server.connections).toBe(0);
  });

  it("a connection closed before any answer is connection_error", async () => {
    const server = await serve((req) => req.socket.destroy());
    const result = await post(server);
    expect(result).toMatchObject({ ok: false, category: "connection_error" });
  });

  it("a caller's abort is aborted, and an already-aborted signal never connects", async () => {
    const server = await serve(() => {});
    const controller = new AbortController();
    const pending = postWebhook({
      url: `https://${TEST_HOST}:${server.port}/`,
      body: bytes("{}"),
      policy: production(server),
      signal: controller.signal,
    });
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, category: "aborted" });

    server.reset();
    const early = await postWebhook({
      url: `https://${TEST_HOST}:${server.port}/`,
      body: bytes("{}"),
      policy: production(server),
      signal: AbortSignal.abort(),
    });
    expect(early).toMatchObject({ ok: false, category: "aborted" });
    expect(server.connections).toBe(0);
  });
});

describe("egress: the development policy, chosen by name", () => {
  it("reaches http://127.0.0.1:<port>, http://[::1]:<port> and http://localhost:<port>", async () => {
    const v4 = await serve(undefined, "127.0.0.1", false);
    const v6 = await serve(undefined, "::1", false);
    const policy = developmentPolicy(); // the system resolver: localhost comes from /etc/hosts
    policies.push(policy);
    for (const url of [
      `http://127.0.0.1:${v4.port}/hook`,
      `http://[::1]:${v6.port}/hook`,
      `http://localhost:${v4.port}/hook`,
    ]) {
      const result = await postWebhook({ url, body: bytes("{}"), policy });
      expect(result, url).toMatchObject({ ok: true, status: 200 });
    }
    expect(v4.requests).toHaveLength(2);
    expect(v6.requests).toHaveLength(1);
  });

  it("is not what production does with the same URL", async () => {
    const v4 = await serve(undefined, "127.0.0.1", false);
    const result = await postWebhook({
      url: `http://127.0.0.1:${v4.port}/hook`,
      body: bytes("{}"),
      policy: production(v4),
    });
    expect(result).toMatchObject({ ok: false, category: "blocked_url" });
    expect(v4.connections).toBe(0);
  });
});
