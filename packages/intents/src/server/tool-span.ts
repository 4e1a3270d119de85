/**
 * One OpenTelemetry span per tool call (OpenTelemetry's GenAI `execute_tool` span), a child of the
 * MCP request's span and the parent of what the tool does (the holder's enqueues among them). It
 * names the tool as registered, never as sent, and says how the call ended by its outcome and its
 * refusal's stable code; never its arguments, its result or an error's message.
 */
import { liveTracer } from "@doorbell/mcp-endpoint";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { ERROR_META_KEY, type ToolErrorMeta } from "./results.js";

const TRACER = "@doorbell/intents";

/** The span of a call to `tool`, or undefined (no span object) when no SDK is registered. */
export function startToolSpan(tool: string): Span | undefined {
  const tracer = liveTracer(TRACER);
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan(`execute_tool ${tool}`);
  if (span.isRecording()) {
    span.setAttributes({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool });
  }
  return span;
}

/** Runs the tool with its span active, so the spans of what it does are the span's children. */
export function inToolSpan<T>(span: Span, run: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(context.active(), span), run);
}

/** Ends the span with the call's outcome (ok, tool_error, rate_limited, busy, failed). */
export function endToolSpan(span: Span, outcome: string, result: CallToolResult): void {
  span.setAttribute("doorbell.tool.outcome", outcome);
  const meta = result._meta?.[ERROR_META_KEY] as ToolErrorMeta | undefined;
  if (meta !== undefined) span.setAttribute("error.type", meta.code);
  // A refusal of the caller's request is the tool working; the holder failing is an error.
  if (outcome === "failed" || outcome === "busy") span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
