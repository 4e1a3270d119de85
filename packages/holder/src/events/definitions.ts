/**
 * The holder's two event types (push profile open question 1): an intent followed by its code, in
 * any Events mode. Both are served by check functions over the holder's own tables, so poll, push
 * and webhook read the same match log and the same status; the code is the only key, and a
 * subscription sees its own intent and nothing else.
 */
import { type EventDefinition, EventsError, type JsonObject } from "@doorbell/mcp-events";
import type { Kysely } from "@doorbell/store";
import { z } from "zod";
import { intentView, matchView } from "../mcp/views.js";
import type { IntentService } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
import type { IntentStatus } from "../model/types.js";
import { decodeMatchCursor, encodeMatchCursor } from "./match-cursor.js";
import { headOf, matchesAfter } from "./match-log.js";

export const MATCHES_DELIVERED = "intent.matches.delivered";
export const STATUS_CHANGED = "intent.status.changed";

const codeParams = z.object({
  intentCode: z
    .string()
    .min(1)
    .max(200)
    .describe("the intentCode intent_publish_intent returned: it names the intent and proves access to it"),
});
export type CodeParams = z.output<typeof codeParams>;

const STATUSES: readonly IntentStatus[] = [
  "awaiting_consent",
  "awaiting_email_confirmation",
  "active",
  "expired",
  "withdrawn",
];

export interface DefinitionDeps {
  db: Kysely<HolderTables>;
  intents: IntentService;
  clock: () => number;
}

/** The intent a code stands for; Unauthorized (never naming the code) otherwise. */
export async function intentOf(intents: IntentService, params: CodeParams): Promise<string> {
  const principal = await intents.principalForCode(params.intentCode);
  if (principal?.kind !== "intent-code")
    throw new EventsError("Unauthorized", { reason: "Unknown or expired intentCode" });
  return principal.intentId;
}

/** `intent.matches.delivered`: one event per match, carrying what intent_list_matches shows for it. */
export function matchesDelivered(deps: DefinitionDeps): EventDefinition<CodeParams> {
  return {
    name: MATCHES_DELIVERED,
    title: "Offers delivered for an intent",
    description:
      "One event per offer this holder delivers for the intent the intentCode names, with the same { offer, deliveredAt } " +
      "intent_list_matches shows. The cursor follows the holder's match log, so no match is skipped across restarts.",
    params: codeParams,
    payloadSchema: {
      type: "object",
      properties: { offer: { type: "object" }, deliveredAt: { type: "string", format: "date-time" } },
      required: ["offer", "deliveredAt"],
    },
    authorize: async (_ctx, params) => {
      await intentOf(deps.intents, params);
      return true;
    },
    async check(_ctx, params, cursor, { maxEvents }) {
      const intentId = await intentOf(deps.intents, params);
      if (cursor === null) return { events: [], cursor: encodeMatchCursor(await headOf(deps.db, intentId)) };
      const after = decodeMatchCursor(cursor);
      const { matches, more } = await matchesAfter(deps.db, intentId, after, maxEvents);
      const last = matches.at(-1)?.position ?? after;
      const events = matches.map(({ position, match }) => ({
        // The same (intent, offer) has the same id on every path; a changed offer delivered again
        // keeps it (clients that de-duplicate see it once, as intent_list_matches' readers do by id).
        eventId: `match_${intentId}_${match.offer.id}`,
        timestamp: match.deliveredAt,
        data: matchView(match) as unknown as JsonObject,
        cursor: encodeMatchCursor(position),
      }));
      return { events, cursor: encodeMatchCursor(last), hasMore: more };
    },
  };
}

/**
 * `intent.status.changed`: the intent's status as intent_get_intent shows it, once per status it
 * reaches. The cursor is the last status seen; statuses never repeat (drafts move forward, and
 * expired and withdrawn are final), so (intent, status) names each event.
 */
export function statusChanged(deps: DefinitionDeps): EventDefinition<CodeParams> {
  return {
    name: STATUS_CHANGED,
    title: "An intent's status changed",
    description:
      "Fires when the intent the intentCode names reaches a new status (awaiting_email_confirmation, active, expired, withdrawn), " +
      "with { status, previousStatus, intent } as intent_get_intent shows it.",
    params: codeParams,
    payloadSchema: {
      type: "object",
      properties: {
        status: { type: "string", enum: [...STATUSES] },
        previousStatus: { type: "string", enum: [...STATUSES] },
        intent: { type: "object" },
      },
      required: ["status", "previousStatus", "intent"],
    },
    authorize: async (_ctx, params) => {
      await intentOf(deps.intents, params);
      return true;
    },
    async check(_ctx, params, cursor) {
      const principal = await deps.intents.principalForCode(params.intentCode);
      if (principal?.kind !== "intent-code")
        throw new EventsError("Unauthorized", { reason: "Unknown or expired intentCode" });
      const intent = await deps.intents.get(principal);
      if (cursor !== null && !STATUSES.includes(cursor as IntentStatus))
        throw new EventsError("CursorExpired", { reason: "This is not a cursor of intent.status.changed" });
      if (cursor === null || cursor === intent.status) return { events: [], cursor: intent.status };
      return {
        events: [
          {
            eventId: `status_${intent.id}_${intent.status}`,
            timestamp: new Date(deps.clock()),
            data: {
              status: intent.status,
              previousStatus: cursor,
              intent: intentView(intent),
            } as unknown as JsonObject,
            cursor: intent.status,
          },
        ],
        cursor: intent.status,
      };
    },
  };
}
