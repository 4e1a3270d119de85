// getJson: the GET beside postWebhook, through the same guarded connector and policies. It
// exists for key pages (agent-agreement/1: "do not follow redirects when fetching a key page").
import { describe, expect, it } from "vitest";
import { getJson, MAX_GET_JSON_BYTES, productionPolicy } from "../src/egress/index.js";
import { isWebhookError } from "../src/errors.js";
import { egressTestBed, type Handler, TEST_CERT, TEST_HOST } from "./egress-helpers.js";

const LEGIT = "127.0.0.2";
const bed = egressTestBed();
const { dns } = bed;

const serve = (handler: Handler) => bed.serve({ host: LEGIT, handler });

const policyFor = (server: { port: number }, allow = true) =>
  bed.keep(
    productionPolicy({
      port: server.port,
      ...(allow ? { allowSubnets: [`${LEGIT}/32`] } : {}),
      ca: TEST_CERT,
      resolver: dns.resolver,
    }),
  );

const json =
  (body: string, headers: Record<string, string> = {}, status = 200): Handler =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  };

describe("getJson", () => {
  it("reads a JSON answer with its exact bytes and Cache-Control, sending only accept", async () => {
    dns.answer([LEGIT]);
    const server = await serve(json('{"keys":[1, 2]}', { "cache-control": "public, max-age=300" }));
    const result = await getJson({
      url: `https://${TEST_HOST}:${server.port}/page.json`,
      policy: policyFor(server),
    });
    expect(result).toMatchObject({
      ok: true,
      status: 200,
      json: { keys: [1, 2] },
      cacheControl: "public, max-age=300",
    });
    if (result.ok) expect(new TextDecoder().decode(result.body)).toBe('{"keys":[1, 2]}');
    const [seen] = server.requests;
    expect(seen?.method).toBe("GET");
    expect(seen?.headers.accept).toBe("application/json");
    expect(seen?.headers["content-type"]).toBeUndefined();
    expect(seen?.headers.cookie).toBeUndefined();
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it("never follows a redirect: 3xx is http_3xx and the target is never asked", async () => {
    dns.answer([LEGIT]);
    const server = await serve((req, res) => {
      res.writeHead(302, { location: `https://${TEST_HOST}:${server.port}/elsewhere.json` });
      res.end();
      expect(req.url).toBe("/page.json");
    });
    const result = await getJson({
      url: `https://${TEST_HOST}:${server.port}/page.json`,
      policy: policyFor(server),
    });
    expect(result).toMatchObject({ ok: false, category: "http_3xx", status: 302 });
    expect(server.requests.map((r) => r.url)).toEqual(["/page.json"]);
  });

  it("refuses an answer longer than maxBytes as too_large", async () => {
    dns.answer([LEGIT]);
    const server = await serve(json(`{"pad":"${"x".repeat(5000)}"}`));
    const result = await getJson({
      url: `https://${TEST_HOST}:${server.port}/page.json`,
      policy: policyFor(server),
      maxBytes: 4096,
    });
    expect(result).toMatchObject({ ok: false, category: "too_large" });
  });

  it("refuses an answer not marked as JSON, and one that does not parse, as not_json", async () => {
    dns.answer([LEGIT]);
    const html = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("{}");
    });
    expect(
      await getJson({ url: `https://${TEST_HOST}:${html.port}/p.json`, policy: policyFor(html) }),
    ).toMatchObject({
      ok: false,
      category: "not_json",
    });
    const broken = await serve(json("{nope"));
    expect(
      await getJson({ url: `https://${TEST_HOST}:${broken.port}/p.json`, policy: policyFor(broken) }),
    ).toMatchObject({ ok: false, category: "not_json" });
  });

  it("refuses a name that resolves to a non-public address before any connection", async () => {
    dns.answer(["127.0.0.1"]);
    const result = await getJson({
      url: `https://${TEST_HOST}:${bed.honeypot.port}/p.json`,
      policy: policyFor(bed.honeypot, false),
    });
    expect(result).toMatchObject({ ok: false, category: "blocked_address" });
    expect(bed.honeypot.connections).toBe(0);
  });

  it("refuses a URL the policy forbids without touching the network", async () => {
    const server = await serve(json("{}"));
    const result = await getJson({ url: "http://127.0.0.1/p.json", policy: policyFor(server) });
    expect(result).toMatchObject({ ok: false, category: "blocked_url" });
    expect(dns.calls).toHaveLength(0);
  });

  it("throws for a caller's mistake: maxBytes out of range", async () => {
    const server = await serve(json("{}"));
    const attempt = getJson({
      url: "https://example.com/",
      policy: policyFor(server),
      maxBytes: MAX_GET_JSON_BYTES + 1,
    });
    await expect(attempt).rejects.toSatisfy(isWebhookError);
  });
});
