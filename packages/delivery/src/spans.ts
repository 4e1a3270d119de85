/**
 * The delivery engine's OpenTelemetry spans: one per enqueue (a producer span, the child of
 * whatever the caller was doing: the holder's tool call) and one per delivery attempt (a client
 * span, in the worker's own trace).
 *
 * The two meet in different processes and transactions, so they are joined by what the outbox
 * already holds rather than by a stored trace context: the webhook-id (`messaging.message.id`),
 * the same id the receiver sees, is on the enqueue span (one event per queued row) and on every
 * attempt of that row. A matches report is coalesced into the subscription's waiting doorbell,
 * whose row (and webhook-id) is made later by the worker: the enqueue span names the
 * subscription (`doorbell.subscription.id`), and so does the attempt.
 *
 * What a span may say: ids the engine made (webhook-id, subscription id), the channel, the event
 * type, counts, the attempt number, the outcome's category and the HTTP status. Never the
 * endpoint's URL or host (sealed: even a host may name a person's agent), a secret, a body or an
 * error's message.
 */
import type { EgressResult } from "@doorbell/webhooks";
import { context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { EnqueueResult } from "./events.js";
import { liveTracer } from "./live-tracer.js";
import type { HeadRow } from "./outbox/backend.js";
import type { Channel } from "./schema.js";

const TRACER = "@doorbell/delivery";

/** The span of an enqueue of `events` events, or undefined (no span object) when no SDK is registered. */
export function startEnqueueSpan(events: number): Span | undefined {
  const tracer = liveTracer(TRACER);
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan("enqueue doorbell", { kind: SpanKind.PRODUCER });
  if (span.isRecording()) {
    span.setAttributes({
      "messaging.system": "doorbell",
      "messaging.operation.type": "send",
      "messaging.operation.name": "enqueue",
      "messaging.batch.message_count": events,
    });
  }
  return span;
}

/** Runs `work` with the span active, so spans made inside it (a database client's) are its children. */
export function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** A row the enqueue meant to write, and its place among the enqueue's events. */
export interface QueuedRow {
  item: number;
  subscriptionId: string;
  webhookId: string;
  type: string;
}

/**
 * What an enqueue did, on its span: one event per row written (its webhook-id, the link to the
 * attempts) and per subscription whose waiting matches doorbell grew, the count of each, and with
 * exactly one row, its webhook-id as the span's own message id.
 */
export function recordEnqueued(
  span: Span,
  rows: readonly QueuedRow[],
  coalesced: Iterable<string>,
  results: readonly EnqueueResult[],
): void {
  if (!span.isRecording()) return;
  // A row whose subscription ended before its lock was taken was not written ("dropped").
  const written = rows.filter((row) => results[row.item] !== "dropped");
  let grown = 0;
  for (const subscriptionId of coalesced) {
    grown++;
    span.addEvent("doorbell.coalesced", { "doorbell.subscription.id": subscriptionId });
  }
  for (const row of written) {
    span.addEvent("doorbell.queued", {
      "messaging.message.id": row.webhookId,
      "doorbell.subscription.id": row.subscriptionId,
      "doorbell.event.type": row.type,
    });
  }
  span.setAttributes({
    "doorbell.enqueue.rows": written.length,
    "doorbell.enqueue.coalesced": grown,
    "doorbell.enqueue.dropped": results.filter((result) => result === "dropped").length,
  });
  if (written.length === 1) span.setAttribute("messaging.message.id", (written[0] as QueuedRow).webhookId);
}

/** Ends an enqueue's span that failed, by its error's class and code only (never its message). */
export function failSpan(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute("error.type", errorType(error));
}

/** The span of one delivery attempt, or undefined (no span object) when no SDK is registered. */
export function startAttemptSpan(channel: Channel, subscriptionId: string, row: HeadRow): Span | undefined {
  const tracer = liveTracer(TRACER);
  if (tracer === undefined) return undefined;
  const span = tracer.startSpan("deliver doorbell", { kind: SpanKind.CLIENT });
  if (span.isRecording()) {
    span.setAttributes({
      "http.request.method": "POST",
      "messaging.system": "doorbell",
      "messaging.operation.type": "process",
      "messaging.operation.name": "deliver",
      "messaging.message.id": row.webhook_id,
      "doorbell.subscription.id": subscriptionId,
      "doorbell.delivery.channel": channel,
      "doorbell.event.type": row.type,
      "doorbell.delivery.attempt": row.attempts + 1,
      "doorbell.delivery.final": row.final === 1,
    });
  }
  return span;
}

/** Ends an attempt's span with its outcome: delivered, or the failure's category, and the status. */
export function endAttemptSpan(span: Span, result: EgressResult | undefined, error?: unknown): void {
  if (result === undefined) {
    failSpan(span, error);
  } else {
    if (result.status !== undefined) span.setAttribute("http.response.status_code", result.status);
    span.setAttribute("doorbell.delivery.outcome", result.ok ? "delivered" : result.category);
    if (!result.ok) {
      span.setAttribute("error.type", result.category);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

/** An error's stable code when it has one (CodedError), else its class's name; never its message. */
function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{0,63}$/.test(code)) return code;
    if (error instanceof Error) return error.name;
  }
  return "unknown";
}
