/**
 * Issue #17: GET /metrics through a whole holder on loopback, after a flow that plants canaries
 * everywhere a metric or an access-log line could pick them up — a contact, a hidden limit, the
 * intentCode, the consent, confirm, manage and approval tokens, a doorbell endpoint with a canary
 * path and its secret. The scrape must count deliveries by outcome and category, the queue, tool
 * calls, mails, imports and requests, and hold none of the canaries; neither may any log line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { forEachEngine, type TestDatabase } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { createHolderLogger } from "../../src/observability/log-format.js";
import { basicIntent, tokenOf } from "../support/intents-harness.js";
import { freePort, until } from "../support/loopback.js";
import { carOffer } from "../support/offer-helpers.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

const CONTACT = "Canary.Metrics.7731@Example.SK";
const CONTACT_SHAPES = ["canary.metrics.7731", "Canary.Metrics.7731", "7731@"];
const LIMIT = 61_493;
const LIMIT_SHAPES = ["61493", "61,493", "61 493", "61.493"];
const PATH_CANARY = "doorbell-CANARYPATH9q2";
const TOKEN = "metrics-token-for-the-test-5f1e";

/** The value of one sample line `name{labels} value`, labels in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let database: TestDatabase;
  let holder: Holder;
  let endpoint: AgentEndpoint;
  let base: string;
  let dataDir: string;
  const lines: string[] = [];

  beforeAll(async () => {
    database = await engine.createDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), "doorbell-metrics-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    holder = await createHolder({
      database: database.url,
      dataDir,
      publicUrl: base,
      env: {},
      demo: false,
      oauth: false,
      events: false,
      webhookPolicy: "development",
      metrics: { token: TOKEN },
      log: createHolderLogger({ level: "info", format: "json", write: (line) => lines.push(line) }),
    });
    await holder.listen(port, "127.0.0.1");
    endpoint = await startAgentEndpoint();
  });
  afterAll(async () => {
    await holder?.close();
    await endpoint?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("/metrics counts what happened and holds no URL, secret, contact or code; no log line does", async () => {
    const { intents, consent, offers } = holder.services;
    const push = holder.services.push as NonNullable<typeof holder.services.push>;
    const mailer = holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("the test holder uses the local mailbox");
    const get = (p: string) => fetch(`${base}${p}`, { redirect: "manual" });

    const published = await intents.publish(basicIntent({ hiddenLimit: LIMIT }));
    const code = published.intentCode;
    const consentToken = tokenOf(published.consentUrl);
    expect((await get(`/consent/${consentToken}`)).status).toBe(200);
    await consent.giveConsent(consentToken, { email: CONTACT, accepted: true });
    const [confirmation] = await mailer.listMailbox({ to: CONTACT.toLowerCase(), limit: 1 });
    const confirmToken = /\/confirm\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string;
    const manageToken = /\/manage\/([0-9A-Za-z]+)/.exec(confirmation?.text ?? "")?.[1] as string;
    expect((await get(`/confirm/${confirmToken}`)).status).toBe(200);
    await consent.confirmEmail(confirmToken);
    expect((await get(`/manage/${manageToken}?code=${code}&from=mail`)).status).toBe(200);
    expect((await get(`/manage/${code}`)).status).toBeGreaterThanOrEqual(400);

    // A doorbell endpoint with a canary in its path; the person approves it.
    const principal = await intents.principalForCode(code);
    if (principal === undefined) throw new Error("the code opens nothing");
    const url = endpoint.url.replace("/doorbell", `/${PATH_CANARY}`);
    const subscribed = await push.subscribe(principal, { delivery: { url, secret: endpoint.secret } });
    await until("the challenge", () => (endpoint.control.challenges > 0 ? true : undefined));
    const approval = await until("the approval mail", async () => {
      const mails = await mailer.listMailbox({ to: CONTACT.toLowerCase(), limit: 10 });
      const text = mails.find((m) => m.subject.startsWith("Allow an assistant"))?.text ?? "";
      return /\/notifications\/([0-9A-Za-z]+)/.exec(text)?.[1];
    });
    expect((await get(`/notifications/${approval}`)).status).toBe(200);
    await push.approve(published.intent.id, subscribed.subscriptionId);

    // A catalogue import that matches: the doorbell rings and is delivered.
    await offers.importCatalogue([
      carOffer({ location: { country: "SK", region: "SK-BL" } }, { mileageKm: 98_000, year: 2019 }),
    ]);
    await until("the matches doorbell", () =>
      endpoint.of("intent.matches.delivered").length > 0 ? true : undefined,
    );
    // The withdrawal's subscription.ended (sent once, never retried) fails: the endpoint answers
    // 503, counted as a category, never as the endpoint.
    endpoint.control.status = 503;
    await intents.withdraw(principal);
    await until("a failed attempt", async () => {
      const text = await (
        await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      return (sample(text, "doorbell_delivery_attempts_total", { kind: "final", outcome: "http_5xx" }) ?? 0) >
        0
        ? true
        : undefined;
    });

    // What the MCP handler reports (the lead wires it), including a hostile tool name.
    holder.metrics.observeToolCall("intent_publish", "ok", 0.012);
    holder.metrics.observeToolCall(CONTACT, "ok", 0.5);
    holder.metrics.observeToolCall("intent_get", code, 0.5);

    // A full collection, for the heap kept after one (the gc function without --expose-gc).
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the GC observer hears of it

    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();

    // Deliveries by outcome and category, the queue and the oldest waiting doorbell.
    expect(sample(text, "doorbell_delivery_attempts_total", { kind: "challenge", outcome: "passed" })).toBe(
      1,
    );
    expect(
      sample(text, "doorbell_delivery_attempts_total", { kind: "event", outcome: "delivered" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "doorbell_delivery_attempts_total", { kind: "final", outcome: "http_5xx" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, "doorbell_delivery_queue_depth")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "doorbell_delivery_oldest_due_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "doorbell_delivery_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(0);
    // MCP calls by tool, outcome and latency; a name that is not a tool's shape is `other`.
    expect(sample(text, "doorbell_mcp_tool_calls_total", { tool: "intent_publish", outcome: "ok" })).toBe(1);
    expect(sample(text, "doorbell_mcp_tool_calls_total", { tool: "other", outcome: "ok" })).toBe(1);
    expect(sample(text, "doorbell_mcp_tool_calls_total", { tool: "intent_get", outcome: "other" })).toBe(1);
    expect(sample(text, "doorbell_mcp_tool_call_seconds_count", { tool: "intent_publish" })).toBe(1);
    // Mails and imports.
    expect(
      sample(text, "doorbell_mails_total", { transport: "local-mailbox", result: "sent" }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(text, "doorbell_catalogue_imports_total", { result: "done" })).toBe(1);
    expect(sample(text, "doorbell_catalogue_offers_total", { change: "inserted" })).toBe(1);
    expect(sample(text, "doorbell_catalogue_import_matches_total")).toBe(1);
    // Requests by route shape, the token never in a label.
    expect(sample(text, "doorbell_http_requests_total", { route: "/consent/:token", status: "2xx" })).toBe(1);
    expect(
      sample(text, "doorbell_http_requests_total", { route: "/notifications/:token", status: "2xx" }),
    ).toBe(1);
    expect(sample(text, "doorbell_http_requests_total", { route: "/metrics", status: "4xx" })).toBe(2);
    // Admission and memory, read at the scrape: nothing is being served or waits now.
    expect(sample(text, "doorbell_mcp_requests_active")).toBe(0);
    expect(sample(text, "doorbell_mcp_requests_waiting")).toBe(0);
    expect(sample(text, "doorbell_mcp_requests_refused_total")).toBe(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 2 ** 20);
    expect(sample(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(sample(text, "nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(
      sample(text, "nodejs_heap_size_used_bytes") as number,
    );
    expect(sample(text, "doorbell_heap_used_after_major_gc_bytes")).toBeGreaterThan(0);
    // The full collection above paused the process, and the loop's delay since watching began.
    expect(sample(text, "nodejs_gc_pause_seconds_total", { kind: "major" })).toBeGreaterThan(0);
    expect(sample(text, "nodejs_gc_pause_total", { kind: "major" })).toBeGreaterThanOrEqual(1);
    // The pool's connections on PostgreSQL (the scrape's own query may be waiting for one to
    // open); SQLite has no pool.
    if (engine.dialect === "postgres") {
      expect(sample(text, "doorbell_store_connections", { state: "open" })).toBeGreaterThanOrEqual(1);
      expect(sample(text, "doorbell_store_connections", { state: "waiting" })).toBeLessThanOrEqual(1);
    } else expect(sample(text, "doorbell_store_connections", { state: "open" })).toBeUndefined();
    const loopMax = sample(text, "nodejs_eventloop_lag_seconds", { quantile: "1" }) as number;
    expect(loopMax).toBeGreaterThan(0);
    expect(loopMax).toBeGreaterThanOrEqual(
      sample(text, "nodejs_eventloop_lag_seconds", { quantile: "0.99" }) as number,
    );

    const endpointPort = new URL(endpoint.url).port;
    const canaries = [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      "example.sk",
      code,
      code.slice(3),
      consentToken,
      confirmToken,
      manageToken,
      approval,
      PATH_CANARY,
      `:${endpointPort}`,
      endpoint.secret,
      endpoint.secret.slice(6),
      TOKEN,
    ];
    // A number canary counts only as a whole number: a latency such as 0.0614937 s is no leak.
    const planted = (haystack: string, canary: string): boolean =>
      /^[0-9., ]+$/.test(canary)
        ? new RegExp(`(^|[^0-9.])${canary.replace(/[.]/g, "\\.")}($|[^0-9])`).test(haystack)
        : haystack.includes(canary);
    for (const canary of canaries) expect(planted(text, canary), `metrics hold ${canary}`).toBe(false);
    const logs = lines.join("");
    for (const canary of canaries) expect(planted(logs, canary), `a log line holds ${canary}`).toBe(false);

    // One access-log line per request, with the tokens replaced by their names.
    const access = lines
      .map((line) => JSON.parse(line) as { event?: string; path?: string; status?: number })
      .filter((line) => line.event === "http.request");
    expect(access.map((line) => line.path)).toEqual(
      expect.arrayContaining([
        "/consent/:token",
        "/confirm/:token",
        "/manage/:token?code=*&from=*",
        "/notifications/:token",
        "/metrics",
      ]),
    );
    expect(access.length).toBeGreaterThanOrEqual(8);
  });

  it("open metrics (no token) are refused on a holder reachable beyond loopback, and absent unless turned on", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "doorbell-metrics-open-"));
    const other = await engine.createDatabase();
    const open = await createHolder({
      database: other.url,
      dataDir: dir,
      publicUrl: "https://intents.example.sk",
      env: {},
      oauth: false,
      events: false,
      metrics: {},
      log: createHolderLogger({ level: "silent", format: "json" }),
    });
    try {
      await expect(open.listen(0, "127.0.0.1")).rejects.toThrow(/metrics token/);
    } finally {
      await open.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // The main holder of this suite without a token would answer 401; a holder without the
    // option has no /metrics at all.
    const bare = mkdtempSync(path.join(tmpdir(), "doorbell-metrics-off-"));
    const third = await engine.createDatabase();
    const off = await createHolder({
      database: third.url,
      dataDir: bare,
      env: {},
      oauth: false,
      events: false,
      log: createHolderLogger({ level: "silent", format: "json" }),
    });
    try {
      expect((await off.fetch(new Request("http://127.0.0.1:8080/metrics"))).status).toBe(404);
    } finally {
      await off.close();
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
