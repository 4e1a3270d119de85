import type { Span } from "@opentelemetry/api";
import {
  followsMcpRules,
  mcpEnvelope,
  mcpStandardEnvelope,
  pushEnvelope,
  standardWebhookId,
} from "./channels.js";
import { coalescedCarriers, coalescedReport, mergeMatches } from "./coalesce.js";
import type { Db, EngineContext } from "./context.js";
import { DeliveryError } from "./errors.js";
import type { DeliveryEvent, EnqueueItem, EnqueueResult } from "./events.js";
import { randomId } from "./ids.js";
import type { MatchesAdded } from "./matches-added.js";
import type { AppendRow } from "./outbox/backend.js";
import type { Channel } from "./schema.js";
import { failSpan, inSpan, recordEnqueued, startEnqueueSpan } from "./spans.js";
import { notifyWorkers } from "./subscriptions.js";
import type { Target } from "./targets.js";

const MAX_BODY_BYTES = 256 * 1024;

/**
 * Queues one event for one subscription inside the caller's transaction, so the domain change and
 * its doorbell commit or roll back together. Order of enqueue is order of delivery.
 */
export async function enqueue(
  ctx: EngineContext,
  db: Db,
  subscriptionId: string,
  event: DeliveryEvent,
): Promise<EnqueueResult> {
  const [result] = await enqueueMany(ctx, db, [{ subscriptionId, event }]);
  return result as EnqueueResult;
}

/**
 * Queues many events, for one or many subscriptions, inside the caller's transaction: the same
 * result as calling `enqueue` for each in order (per subscription, order of the items is order of
 * delivery), with a handful of statements instead of three per event. Every event is checked
 * before anything is written; a bad one throws and writes nothing.
 */
export async function enqueueMany(
  ctx: EngineContext,
  db: Db,
  items: readonly EnqueueItem[],
): Promise<EnqueueResult[]> {
  if (items.length === 0) return [];
  // In a span of its own when an OpenTelemetry SDK is registered (spans.ts).
  const span = startEnqueueSpan(items.length);
  if (span === undefined) return enqueueAll(ctx, db, items);
  try {
    return await inSpan(span, () => enqueueAll(ctx, db, items, span));
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

async function enqueueAll(
  ctx: EngineContext,
  db: Db,
  items: readonly EnqueueItem[],
  span?: Span,
): Promise<EnqueueResult[]> {
  const now = ctx.clock();
  const ids = [...new Set(items.map((item) => item.subscriptionId))];
  const targets = await ctx.outbox.targets(ctx, db, ids, items);

  // Check and build everything first: nothing is written when one event is refused.
  const results: EnqueueResult[] = new Array(items.length);
  const rows: AppendRow[] = [];
  const matches = new Map<string, { count: number; latest: string; before: number }>();
  const defaultTimestamp = new Date(now).toISOString();
  const coalesced = ctx.coalesced;
  const isCoalesced = (sub: Target, event: DeliveryEvent) =>
    sub.channel === "push" && coalesced !== undefined && event.type === coalesced.event;
  // Asked once for the whole batch: which subscriptions may carry the coalesced event at all.
  const carriers =
    coalesced === undefined
      ? new Set<string>()
      : await coalescedCarriers(coalesced, db, [
          ...new Set(
            items
              .filter(({ subscriptionId, event }) =>
                isCoalesced(targets.get(subscriptionId) as Target, event),
              )
              .map((item) => item.subscriptionId),
          ),
        ]);
  items.forEach(({ subscriptionId, event }, item) => {
    const sub = targets.get(subscriptionId) as Target;
    if (sub.status === "ended") {
      results[item] = "dropped";
      return;
    }
    const timestamp = event.timestamp ?? defaultTimestamp;
    if (coalesced !== undefined && isCoalesced(sub, event)) {
      if (!carriers.has(subscriptionId)) {
        results[item] = "dropped";
        return;
      }
      const report = coalescedReport(coalesced, event.data);
      const waiting = matches.get(subscriptionId) ?? {
        count: sub.agg_new_matches,
        latest: sub.agg_latest_delivered_at,
        before: sub.agg_new_matches,
      };
      results[item] = waiting.count > 0 ? "coalesced" : "queued";
      matches.set(subscriptionId, { ...mergeMatches(waiting, report), before: waiting.before });
      return;
    }
    let webhookId: string;
    let body: string;
    if (followsMcpRules(sub.channel)) {
      if (!event.eventId || !/^[\x21-\x7e]{1,256}$/.test(event.eventId)) {
        throw new DeliveryError(
          "ERR_DELIVERY_INVALID_EVENT",
          "an MCP event needs an eventId of 1–256 printable ASCII characters",
        );
      }
      const delivery = { ...event, eventId: event.eventId, timestamp };
      if (sub.channel === "mcp-standard") {
        webhookId = standardWebhookId(event.eventId);
        body = mcpStandardEnvelope(delivery);
      } else {
        if (event.gap !== undefined) {
          throw new DeliveryError(
            "ERR_DELIVERY_INVALID_EVENT",
            "a gap envelope exists only on the mcp-standard channel (the sketch reports CursorExpired)",
          );
        }
        webhookId = event.eventId;
        body = mcpEnvelope(sub.subscriber_id, delivery);
      }
    } else {
      webhookId = randomId("msg_");
      body = pushEnvelope(event.type, timestamp, event.data);
    }
    // A UTF-8 byte is at most 3 per UTF-16 unit: only a long body needs counting.
    if (body.length * 3 > MAX_BODY_BYTES && Buffer.byteLength(body) > MAX_BODY_BYTES) {
      throw new DeliveryError(
        "ERR_DELIVERY_INVALID_EVENT",
        `an event body is at most ${MAX_BODY_BYTES} bytes`,
      );
    }
    results[item] = "queued";
    rows.push({ item, subscriptionId, webhookId, type: event.type, body });
  });

  // Matches reports only add to the waiting aggregate (push profile §6 rule 6), one row update
  // each: a subscription that had none waiting wakes its worker, which then sleeps until the
  // window opens, so a busy intent's matches cost no claim and release (matches-added.ts).
  let woken = false;
  const reports: MatchesAdded[] = [];
  for (const [id, merged] of matches) {
    woken ||= merged.before === 0;
    reports.push({ id, added: merged.count - merged.before, latest: merged.latest });
  }
  if (reports.length > 0) await ctx.outbox.addMatches(db, reports, now);
  if (rows.length > 0) {
    const ended = await ctx.outbox.append(ctx, db, rows, now);
    for (const row of rows) if (ended.has(row.subscriptionId)) results[row.item] = "dropped";
  }
  if (span !== undefined) recordEnqueued(span, rows, matches.keys(), results);

  if (rows.length > 0 || woken) await notifyWorkers(ctx, db);
  // One increment per kind of result rather than per event: labelling costs more than counting.
  const counted = new Map<string, { channel: Channel; result: EnqueueResult; n: number }>();
  items.forEach(({ subscriptionId }, item) => {
    const channel = (targets.get(subscriptionId) as Target).channel;
    const result = results[item] as EnqueueResult;
    const key = `${channel} ${result}`;
    const entry = counted.get(key);
    if (entry) entry.n += 1;
    else counted.set(key, { channel, result, n: 1 });
  });
  for (const { channel, result, n } of counted.values()) ctx.metrics.enqueued.inc({ channel, result }, n);
  return results;
}
