/**
 * One OpenTelemetry server span per MCP POST (OpenTelemetry's MCP and HTTP conventions), the parent
 * of the tool's span and of everything the tool does. Only what the server decides or checks goes
 * into it: the method from a fixed list of MCP methods, a protocol version of the date's shape, the
 * era, the path and the status. Never the tool name as sent, the JSON-RPC id, the session id, the
 * client's address or anything of the body: a client chooses those, and could put a code or a
 * contact in them. (The tool's own span, made once the call reached a registered tool, names it.)
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { whenAnswered } from "./answered.js";
import { liveTracer } from "./live-tracer.js";

const TRACER = "@doorbell/mcp-endpoint";

/** The methods a client sends to a server (both eras, MCP Events); anything else is "other". */
const METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "server/discover",
  "subscriptions/listen",
  "tasks/get",
  "tasks/list",
  "tasks/result",
  "tasks/cancel",
  "events/list",
  "events/poll",
  "events/stream",
  "events/subscribe",
  "events/unsubscribe",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed",
]);

/** Methods whose answer is a stream meant to stay open: their span ends when the stream opens. */
const STREAMS: ReadonlySet<string> = new Set(["subscriptions/listen", "events/stream"]);

const PROTOCOL_VERSION = /^\d{4}-\d{2}-\d{2}$/;

/** A traced MCP POST: its span, and whether it opens a long-lived stream. */
export interface McpRequestTrace {
  span: Span;
  opensStream: boolean;
}

/** The span of an MCP POST, or undefined (no span object) when no SDK is registered or it is no POST. */
export function startMcpRequestTrace(request: Request): McpRequestTrace | undefined {
  if (request.method !== "POST") return undefined;
  const tracer = liveTracer(TRACER);
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan("mcp", { kind: SpanKind.SERVER });
  if (span.isRecording()) {
    span.setAttributes({
      "http.request.method": "POST",
      // The route this handler serves; the query is never recorded.
      "url.path": new URL(request.url).pathname,
    });
  }
  return { span, opensStream: false };
}

/** Names the span once the body is read: its method (one request) or batch size, era and version. */
export function describeMcpRequest(
  traced: McpRequestTrace,
  request: Request,
  body: unknown,
  era: "modern" | "legacy",
): void {
  const { span } = traced;
  const header = request.headers.get("mcp-protocol-version");
  if (span.isRecording()) {
    span.setAttribute("doorbell.mcp.era", era);
    if (header !== null && PROTOCOL_VERSION.test(header)) span.setAttribute("mcp.protocol.version", header);
  }
  if (Array.isArray(body)) {
    span.updateName("mcp batch");
    if (span.isRecording()) span.setAttribute("doorbell.mcp.batch_size", body.length);
    return;
  }
  const sent = typeof body === "object" && body !== null ? (body as { method?: unknown }).method : undefined;
  const method =
    typeof sent === "string" && METHODS.has(sent) ? sent : sent === undefined ? "response" : "other";
  traced.opensStream = STREAMS.has(method);
  span.updateName(method);
  if (span.isRecording()) span.setAttribute("mcp.method.name", method);
}

/**
 * Serves the request with its span active (so the tool's span and the spans of what it does are
 * its children) and ends the span once the answer is complete: a JSON answer when it exists, an
 * SSE answer when its stream ends, a long-lived stream as soon as it opens.
 */
export async function traceMcpRequest(
  traced: McpRequestTrace,
  serve: () => Promise<Response>,
): Promise<Response> {
  const { span } = traced;
  let response: Response;
  try {
    response = await context.with(trace.setSpan(context.active(), span), serve);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
    span.end();
    throw error;
  }
  span.setAttribute("http.response.status_code", response.status);
  if (response.status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute("error.type", String(response.status));
  }
  if (traced.opensStream) {
    span.end();
    return response;
  }
  return whenAnswered(response, () => span.end());
}

/**
 * The span of a quick call (quick-call.ts: a plain 2026-07-28 `tools/call` answered beside the
 * SDK), the same as the SDK path's for that request; undefined (no span object) without an SDK.
 * `path` is the Node request's URL, whose query is dropped.
 */
export function startQuickCallSpan(path: string): Span | undefined {
  const tracer = liveTracer(TRACER);
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan("tools/call", { kind: SpanKind.SERVER });
  if (span.isRecording()) {
    span.setAttributes({
      "http.request.method": "POST",
      "url.path": pathOnly(path),
      "doorbell.mcp.era": "modern",
      "mcp.method.name": "tools/call",
      "mcp.protocol.version": "2026-07-28",
    });
  }
  return span;
}

/** Runs a quick call's tool with its span active, so the tool's span and what it does are children. */
export function inQuickCallSpan<T>(span: Span, run: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(context.active(), span), run);
}

/** Ends a quick call's span once its answer is written. */
export function endQuickCallSpan(span: Span, status: number): void {
  span.setAttribute("http.response.status_code", status);
  span.end();
}

/** The path of a Node request's target: no query, and no scheme or host (an absolute-form target). */
function pathOnly(target: string): string {
  if (!target.startsWith("/")) return URL.canParse(target) ? new URL(target).pathname : "/";
  const query = target.indexOf("?");
  return query === -1 ? target : target.slice(0, query);
}
