import { z } from "zod";
import { type EventDefinition, EventsError, type EventsServer } from "../src/index.js";

/** The sketch's `email.received`: emit-only, `from` glob filter, `redact_pii` transform. */
export const emailParams = z.object({
  from: z.string().optional(),
  subject_contains: z.string().optional(),
  redact_pii: z.boolean().default(false),
  include_body_preview: z.boolean().default(true),
});
type EmailParams = z.output<typeof emailParams>;

function glob(pattern: string, value: string): boolean {
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${source}$`).test(value);
}

export interface Hooks {
  subscribed: string[];
  unsubscribed: string[];
  allowed: boolean;
}

export function newHooks(): Hooks {
  return { subscribed: [], unsubscribed: [], allowed: true };
}

export function emailReceived(hooks: Hooks): EventDefinition<EmailParams> {
  return {
    name: "email.received",
    description: "Fires when a new email arrives in the inbox",
    params: emailParams as unknown as z.ZodType<EmailParams>,
    payloadSchema: {
      type: "object",
      properties: {
        messageId: { type: "string" },
        from: { type: "string" },
        subject: { type: "string" },
        receivedAt: { type: "string", format: "date-time" },
      },
    },
    match: (_ctx, event, params) => params.from === undefined || glob(params.from, String(event.data.from)),
    transform: (_ctx, event, params) =>
      params.redact_pii ? { ...event, data: { ...event.data, from: "[redacted]" } } : event,
    authorize: () => {
      if (!hooks.allowed) throw new EventsError("Unauthorized", { reason: "Access revoked" });
      return true;
    },
    onSubscribe: (ctx, _params, id) => {
      hooks.subscribed.push(`${ctx.mode}:${id}`);
    },
    onUnsubscribe: (ctx, _params, id) => {
      hooks.unsubscribed.push(`${ctx.mode}:${id}`);
    },
  };
}

/** `incident.created` backed by a check function over an upstream log: the cursor is an index. */
export function incidentCreated(upstream: {
  log: { id: string; severity: string }[];
  compactedBefore: number;
}) {
  return {
    name: "incident.created",
    description: "Fires when a new PagerDuty incident is created",
    params: z.object({ severity: z.enum(["P1", "P2", "P3", "P4"]).optional() }),
    check: (
      _ctx: unknown,
      params: { severity?: string },
      cursor: string | null,
      { maxEvents }: { maxEvents: number },
    ) => {
      if (cursor === null) return { events: [], cursor: String(upstream.log.length) };
      const from = Number(cursor);
      if (from < upstream.compactedBefore)
        throw new EventsError("CursorExpired", { reason: "Upstream history compacted" });
      const events = [];
      let position = from;
      for (const incident of upstream.log.slice(from)) {
        if (events.length === maxEvents) break;
        position += 1;
        if (params.severity && incident.severity !== params.severity) continue;
        events.push({
          eventId: incident.id,
          data: { incidentId: incident.id, severity: incident.severity },
          timestamp: "2026-02-19T16:00:00Z",
          cursor: String(position),
        });
      }
      return { events, cursor: String(position), hasMore: position < upstream.log.length };
    },
  } satisfies EventDefinition<{ severity?: "P1" | "P2" | "P3" | "P4" }>;
}

/** The email event `emitEmail` emits, as a subscriber reads it (`from` is "[redacted]" with redact_pii). */
export function emailEvent(eventId: string, from: string, subject = "MCP spec review") {
  return {
    eventId,
    name: "email.received",
    timestamp: "2026-02-19T15:30:00Z",
    data: { messageId: `msg_${eventId}`, from, subject, receivedAt: "2026-02-19T15:29:58Z" },
  };
}

export function emitEmail(events: EventsServer, eventId: string, from: string, subject = "MCP spec review") {
  const { name: _, ...occurrence } = emailEvent(eventId, from, subject);
  events.emit("email.received", occurrence);
}
