/**
 * OpenTelemetry spans through a real holder on loopback, collected by the SDK's in-memory exporter:
 * an agent's MCP request, its tool call, the doorbells it queues and their delivery attempts to a
 * real receiver, joined by the webhook-id the receiver saw (and a coalesced matches report by its
 * subscription). The flow plants canaries everywhere a span could pick one up (a contact, a hidden
 * limit, the intentCode, the consent and approval tokens, an endpoint with a canary path and its
 * secret, a hostile method, tool name, JSON-RPC id and query) and no span's name, attribute, event,
 * link or status may hold one. Both eras, both engines.
 */

import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder } from "../../src/app/holder.js";
import { isLocalMailbox } from "../../src/mail/local-mailbox.js";
import { basicIntent, tokenOf } from "../support/intents-harness.js";
import { freePort } from "../support/loopback.js";
import {
  activeIntent,
  basicPublish,
  modernPost,
  ok,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";
import { approvalToken } from "../support/push-calls.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

const CONTACT = "Canary.Traces.4417@Example.SK";
const CONTACT_SHAPES = ["canary.traces.4417", "Canary.Traces.4417", "4417@", "example.sk"];
const LIMIT = 14_871;
const LIMIT_SHAPES = ["14871", "14,871", "14 871", "14.871"];
const PATH_CANARY = "doorbell-TRACECANARY7k";
const TOOL_CANARY = "intent_canary_tool_6t1";
const METHOD_CANARY = "notifications/canary_method_3p9";
const ID_CANARY = "canary-jsonrpc-id-8w2";
const SELLER_CANARY = "Autobazár Canaryovo";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

// Registered for this file only: Vitest runs other files in this worker afterwards.
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

/** Everything a span carries that an exporter would send, as one string. */
function exported(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    links: span.links,
    status: span.status,
  });
}

/** Whether `ancestor` is `span`'s parent, or its parent's, and so on. */
function descends(spans: readonly ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(spans.map((each) => [each.spanContext().spanId, each]));
  let parent = span.parentSpanContext?.spanId;
  while (parent !== undefined) {
    if (parent === ancestor.spanContext().spanId) return true;
    parent = byId.get(parent)?.parentSpanContext?.spanId;
  }
  return false;
}

const parentOf = (spans: readonly ReadableSpan[], span: ReadableSpan) =>
  spans.find((each) => each.spanContext().spanId === span.parentSpanContext?.spanId);

const messageIds = (span: ReadableSpan): string[] =>
  span.events
    .filter((event) => event.name === "doorbell.queued")
    .map((event) => String(event.attributes?.["messaging.message.id"]));

/** A pull in the plain shape an SDK client sends, which the holder answers beside the SDK (quick-call.ts). */
function plainPull(url: string, intentCode: string): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: ID_CANARY,
    method: "tools/call",
    params: {
      name: "intent_list_matches",
      arguments: { intentCode },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "traces-test", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  const headers = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-method": "tools/call",
    "mcp-name": "intent_list_matches",
    "mcp-protocol-version": "2026-07-28",
  };
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers, agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
    request.end(body);
  });
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let endpoint: AgentEndpoint;

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
  });
  afterAll(async () => {
    await h?.close();
    await endpoint?.close();
  });

  const runDue = () => (h.delivery as NonNullable<TestHolder["delivery"]>).runDue();

  it("joins MCP request → tool → enqueue → attempt by the webhook-id, in both eras, and no span holds a canary", async () => {
    exporter.reset();
    const modern = await h.connect("modern-agent");
    const legacy = await h.connectLegacy("legacy-agent");
    const published = await activeIntent(
      h,
      modern,
      CONTACT,
      basicPublish({ visibility: "pseudonymous", hiddenLimit: LIMIT }),
    );
    const code = published.intentCode;
    const consentToken = published.consentUrl.slice(published.consentUrl.lastIndexOf("/") + 1);

    // A doorbell endpoint with a canary in its path, subscribed by the modern agent, allowed by the person.
    const url = endpoint.url.replace("/doorbell", `/${PATH_CANARY}`);
    const subscribed = await ok<{ subscriptionId: string }>(modern, "intent_subscribe_events", {
      intentCode: code,
      delivery: { url, secret: endpoint.secret },
    });
    await runDue();
    const approval = await approvalToken(h, CONTACT.toLowerCase());
    await h.services.push?.approveByToken(approval);
    await runDue();

    // A seller's reply over MCP: a matches report, coalesced into the subscription's doorbell.
    const reply = await ok(modern, "intent_submit_offer", {
      inReplyTo: published.intent.id,
      source: { kind: "reply", seller: SELLER_CANARY },
      title: "Škoda Octavia Combi, reserved for you",
      category: "vehicles",
      price: { amount: 12_900, currency: "EUR" },
      location: { country: "SK", region: "SK-BL" },
      attributes: { make: "Škoda", model: "Octavia", fuel: "diesel", mileageKm: 90_000 },
    });
    expect(reply).toEqual({ accepted: true });
    await runDue();
    const [matches] = endpoint.of("intent.matches.delivered");
    expect(matches?.data.subscriptionId).toBe(subscribed.subscriptionId);

    // The legacy agent withdraws: its last status and subscription.ended are queued in the tool call.
    await ok(legacy, "intent_withdraw_intent", { intentCode: code });
    await runDue();
    const withdrawn = endpoint
      .of("intent.status.changed")
      .find((doorbell) => doorbell.data.status === "withdrawn");
    const [ended] = endpoint.of("subscription.ended");
    expect(withdrawn).toBeDefined();
    expect(ended).toBeDefined();

    // What a client chooses and the server must not repeat: a method, a tool name, an id, a query.
    const hostileMethod = modernPost(METHOD_CANARY, {}, { id: ID_CANARY });
    await rawRequest(h.mcpUrl, hostileMethod);
    const hostileTool = modernPost(
      "tools/call",
      { name: TOOL_CANARY, arguments: { intentCode: code } },
      {
        id: ID_CANARY,
      },
    );
    const unknownTool = await rawRequest(new URL(`${h.mcpUrl.href}?code=${code}`), hostileTool);
    expect(unknownTool.status).toBeLessThan(500);

    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();

    // Legacy era: the withdrawal's request, its tool call, the two rows it queued, their attempts.
    const withdrawTool = spans.find((span) => span.name === "execute_tool intent_withdraw_intent");
    if (withdrawTool === undefined) throw new Error("no span for the withdrawal's tool call");
    expect(withdrawTool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "intent_withdraw_intent",
      "doorbell.tool.outcome": "ok",
    });
    const withdrawRequest = parentOf(spans, withdrawTool);
    expect(withdrawRequest?.name).toBe("tools/call");
    expect(withdrawRequest?.kind).toBe(SpanKind.SERVER);
    expect(withdrawRequest?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "doorbell.mcp.era": "legacy",
      "http.request.method": "POST",
      "url.path": "/mcp",
      "http.response.status_code": 200,
    });
    const withdrawEnqueues = spans.filter(
      (span) => span.name === "enqueue doorbell" && descends(spans, span, withdrawTool),
    );
    expect(withdrawEnqueues.every((span) => span.kind === SpanKind.PRODUCER)).toBe(true);
    expect(
      withdrawEnqueues.every((span) => span.spanContext().traceId === withdrawRequest?.spanContext().traceId),
    ).toBe(true);
    const queuedIds = withdrawEnqueues.flatMap(messageIds);
    // The ids the receiver saw are the ids the enqueue spans recorded, and each has its attempt.
    expect(new Set(queuedIds)).toEqual(new Set([withdrawn?.id, ended?.id]));
    for (const doorbell of [withdrawn, ended]) {
      const attempt = spans.find(
        (span) =>
          span.name === "deliver doorbell" && span.attributes["messaging.message.id"] === doorbell?.id,
      );
      expect(attempt?.kind).toBe(SpanKind.CLIENT);
      expect(attempt?.attributes).toMatchObject({
        "doorbell.delivery.outcome": "delivered",
        "doorbell.delivery.channel": "push",
        "doorbell.delivery.attempt": 1,
        "doorbell.delivery.final": true,
        "doorbell.event.type": doorbell?.type,
        "doorbell.subscription.id": subscribed.subscriptionId,
        "http.response.status_code": 200,
      });
    }

    // Modern era: the reply's request and tool call, the report coalesced for the subscription,
    // the worker's doorbell row for it and that row's attempt, by the webhook-id the receiver saw.
    const replyTool = spans.find((span) => span.name === "execute_tool intent_submit_offer");
    if (replyTool === undefined) throw new Error("no span for the reply's tool call");
    const replyRequest = parentOf(spans, replyTool);
    expect(replyRequest?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "doorbell.mcp.era": "modern",
      "mcp.protocol.version": "2026-07-28",
    });
    const coalesced = spans.find(
      (span) =>
        span.name === "enqueue doorbell" &&
        descends(spans, span, replyTool) &&
        span.events.some(
          (event) =>
            event.name === "doorbell.coalesced" &&
            event.attributes?.["doorbell.subscription.id"] === subscribed.subscriptionId,
        ),
    );
    expect(coalesced).toBeDefined();
    const made = spans.find(
      (span) => span.name === "enqueue doorbell" && span.attributes["messaging.message.id"] === matches?.id,
    );
    expect(made?.events[0]?.attributes).toMatchObject({
      "doorbell.subscription.id": subscribed.subscriptionId,
      "doorbell.event.type": "intent.matches.delivered",
    });
    const matchesAttempt = spans.find(
      (span) => span.name === "deliver doorbell" && span.attributes["messaging.message.id"] === matches?.id,
    );
    expect(matchesAttempt?.attributes).toMatchObject({
      "doorbell.delivery.outcome": "delivered",
      "doorbell.subscription.id": subscribed.subscriptionId,
      "doorbell.event.type": "intent.matches.delivered",
    });

    // The hostile requests: named by what the server knows, never by what the client sent.
    expect(
      spans.some((span) => span.name === "other" && span.attributes["mcp.method.name"] === "other"),
    ).toBe(true);
    expect(
      spans.filter((span) => span.name.startsWith("execute_tool")).map((span) => span.name),
    ).not.toContain(`execute_tool ${TOOL_CANARY}`);

    const canaries = [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      code,
      code.slice(3),
      consentToken,
      approval,
      url,
      PATH_CANARY,
      "127.0.0.1",
      `:${new URL(endpoint.url).port}`,
      endpoint.secret,
      endpoint.secret.slice(6),
      TOOL_CANARY,
      METHOD_CANARY,
      ID_CANARY,
      "Canaryovo",
      "Octavia",
    ];
    // A number canary counts only as a whole number: a duration or an id digit run is no leak.
    const planted = (haystack: string, canary: string): boolean =>
      /^[0-9., ]+$/.test(canary)
        ? new RegExp(`(^|[^0-9.])${canary.replace(/[.]/g, "\\.")}($|[^0-9])`).test(haystack)
        : haystack.includes(canary);
    expect(spans.length).toBeGreaterThan(10);
    for (const span of spans) {
      const text = exported(span);
      for (const canary of canaries)
        expect(planted(text, canary), `${span.name} holds ${canary}`).toBe(false);
    }
  });
  it("a pull the holder answers beside the SDK has the same request and tool spans, and no canary", async () => {
    const database = await engine.createDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), "doorbell-traces-"));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = "metrics-token-traces-test";
    const holder = await createHolder({
      database: database.url,
      dataDir,
      publicUrl: base,
      env: {},
      demo: false,
      oauth: false,
      events: false,
      metrics: { token },
    });
    try {
      await holder.listen(port, "127.0.0.1");
      const mailer = holder.context.mailer;
      if (!isLocalMailbox(mailer)) throw new Error("the test holder uses the local mailbox");
      const published = await holder.services.intents.publish(basicIntent({ hiddenLimit: LIMIT }));
      await holder.services.consent.giveConsent(tokenOf(published.consentUrl), {
        email: CONTACT,
        accepted: true,
      });
      const [mail] = await mailer.listMailbox({ to: CONTACT.toLowerCase(), limit: 1 });
      await holder.services.consent.confirmEmail(
        /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1] as string,
      );
      exporter.reset();

      expect(await plainPull(`${base}/mcp`, published.intentCode)).toBe(200);
      const scraped = await (
        await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      ).text();
      expect(/^doorbell_mcp_quick_calls_total 1$/m.test(scraped), "the quick call answered").toBe(true);

      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const tool = spans.find((span) => span.name === "execute_tool intent_list_matches");
      if (tool === undefined) throw new Error("no span for the pull's tool call");
      expect(tool.attributes).toMatchObject({ "doorbell.tool.outcome": "ok" });
      const request = parentOf(spans, tool);
      expect(request?.name).toBe("tools/call");
      expect(request?.kind).toBe(SpanKind.SERVER);
      expect(request?.attributes).toEqual({
        "http.request.method": "POST",
        "url.path": "/mcp",
        "doorbell.mcp.era": "modern",
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": "2026-07-28",
        "http.response.status_code": 200,
      });
      for (const span of spans) {
        const text = exported(span);
        for (const canary of [
          published.intentCode,
          published.intentCode.slice(3),
          ID_CANARY,
          ...CONTACT_SHAPES,
        ]) {
          expect(text.includes(canary), `${span.name} holds ${canary}`).toBe(false);
        }
      }
    } finally {
      await holder.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
