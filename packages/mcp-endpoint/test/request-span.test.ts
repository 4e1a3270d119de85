/**
 * The MCP request's span: none at all (not even a no-op span object) until an SDK is registered;
 * with one, named and described only by what the server knows (a method from its list, a version
 * of the date's shape, the path without its query), never by what a client chose, and ended once
 * the answer is complete, or once a long-lived stream opens.
 */

import { context, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveTracer } from "../src/live-tracer.js";
import {
  describeMcpRequest,
  endQuickCallSpan,
  startMcpRequestTrace,
  startQuickCallSpan,
  traceMcpRequest,
} from "../src/request-span.js";

/** What an exporter sends of a span: its name, attributes, events and status. */
const exported = (spans: readonly ReadableSpan[]) =>
  JSON.stringify(spans.map(({ name, attributes, events, status }) => ({ name, attributes, events, status })));

const post = (url = "http://127.0.0.1/mcp", headers: Record<string, string> = {}) =>
  new Request(url, { method: "POST", headers, body: "{}" });

describe("without an OpenTelemetry SDK", () => {
  it("makes no span object, where the API's no-op tracer would make one per call", () => {
    expect(liveTracer("@doorbell/test")).toBeUndefined();
    expect(startMcpRequestTrace(post())).toBeUndefined();
    expect(startQuickCallSpan("/mcp")).toBeUndefined();
    // What the hooks avoid: a fresh non-recording span for every call.
    const tracer = trace.getTracer("@doorbell/test");
    expect(tracer.startSpan("a")).not.toBe(tracer.startSpan("a"));
  });
});

describe("with an OpenTelemetry SDK", () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contexts = new AsyncLocalStorageContextManager();
  // Registered for these tests only: Vitest runs other files in this worker afterwards.
  beforeAll(() => {
    context.setGlobalContextManager(contexts.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  const finished = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);

  it("names a known method, and a client's own method, version and query not at all", async () => {
    exporter.reset();
    const request = post("http://127.0.0.1/mcp?code=ic_canary0query", {
      "mcp-protocol-version": "ic_canary0ver",
    });
    const traced = startMcpRequestTrace(request);
    if (traced === undefined) throw new Error("no span with an SDK registered");
    describeMcpRequest(
      traced,
      request,
      { jsonrpc: "2.0", id: "ic_canary0id", method: "ic_canary0method" },
      "legacy",
    );
    await traceMcpRequest(traced, async () => new Response("{}", { status: 200 }));
    const [span] = finished("other");
    expect(span?.kind).toBe(SpanKind.SERVER);
    expect(span?.attributes).toEqual({
      "http.request.method": "POST",
      "url.path": "/mcp",
      "doorbell.mcp.era": "legacy",
      "mcp.method.name": "other",
      "http.response.status_code": 200,
    });
    expect(exported(exporter.getFinishedSpans())).not.toContain("canary0");
  });

  it("names a batch by its size and a client's response as a response", async () => {
    exporter.reset();
    for (const body of [[{ method: "ping" }, { method: "ping" }], { jsonrpc: "2.0", id: 1, result: {} }]) {
      const request = post(undefined, { "mcp-protocol-version": "2025-11-25" });
      const traced = startMcpRequestTrace(request);
      if (traced === undefined) throw new Error("no span with an SDK registered");
      describeMcpRequest(traced, request, body, "legacy");
      await traceMcpRequest(traced, async () => new Response(null, { status: 202 }));
    }
    expect(finished("mcp batch")[0]?.attributes).toMatchObject({
      "doorbell.mcp.batch_size": 2,
      "mcp.protocol.version": "2025-11-25",
    });
    expect(finished("response")[0]?.attributes).toMatchObject({ "mcp.method.name": "response" });
  });

  it("ends an SSE answer's span when its stream ends, a listen's when it opens", async () => {
    exporter.reset();
    const stream = (method: string) => {
      let close: (() => void) | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("data: {}\n\n"));
          close = () => controller.close();
        },
      });
      const request = post();
      const traced = startMcpRequestTrace(request);
      if (traced === undefined) throw new Error("no span with an SDK registered");
      describeMcpRequest(traced, request, { jsonrpc: "2.0", id: 1, method }, "modern");
      const answered = traceMcpRequest(
        traced,
        async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
      );
      return { answered, close: () => close?.() };
    };
    const call = stream("tools/call");
    const listen = stream("subscriptions/listen");
    const callResponse = await call.answered;
    await listen.answered;
    expect(finished("tools/call")).toHaveLength(0);
    expect(finished("subscriptions/listen")).toHaveLength(1);
    call.close();
    await callResponse.text();
    expect(finished("tools/call")).toHaveLength(1);
    listen.close();
  });

  it("describes a quick call as the SDK path would, without its query or host", () => {
    exporter.reset();
    for (const target of ["/mcp?code=ic_canary1", "http://canary1.example/mcp?x=1"]) {
      const span = startQuickCallSpan(target);
      if (span === undefined) throw new Error("no span with an SDK registered");
      endQuickCallSpan(span, 200);
    }
    const spans = finished("tools/call");
    expect(spans.map((span) => span.attributes["url.path"])).toEqual(["/mcp", "/mcp"]);
    expect(spans[0]?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "doorbell.mcp.era": "modern",
    });
    expect(exported(spans)).not.toContain("canary1");
  });
});
