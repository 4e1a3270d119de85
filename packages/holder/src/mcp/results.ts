/**
 * What a tool answers: a success carries its structured result twice (as JSON text for models and
 * as `structuredContent` for programs); a refusal is `isError: true` with plain words, the stable
 * `HolderError` code and, for rate limits, the seconds to wait. Results are built from explicit
 * field lists (never by spreading a service's object), so a field added to a domain shape later
 * cannot reach an agent by accident (binding rule 1).
 */

import type { LimitNote } from "@doorbell/mcp-endpoint";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { DemandSummary, HolderErrorCode, Intent, Match, Offer } from "../domain/types.js";
import { HolderError } from "../domain/types.js";

/** The `_meta` key of a refusal's machine-readable part. */
export const ERROR_META_KEY = "io.doorbell/error";

export interface ToolErrorMeta {
  code: HolderErrorCode | "ERR_HOLDER_INTERNAL";
  retryAfterSeconds?: number;
  /** The limit that refused the call, by name (e.g. `mcp.tool`). */
  limit?: string;
}

export function success(structured: object, note?: string): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text: JSON.stringify(structured) }];
  if (note !== undefined) content.push({ type: "text", text: note });
  return { content, structuredContent: structured as Record<string, unknown> };
}

export function refusal(meta: ToolErrorMeta, message: string): CallToolResult {
  return {
    content: [{ type: "text", text: `${message} (${meta.code})` }],
    isError: true,
    _meta: { [ERROR_META_KEY]: meta },
  };
}

/** A refused tool call: the seconds to wait and, when known, the limit and how it is changed. */
export function rateLimited(retryAfterSeconds: number, limit?: LimitNote): CallToolResult {
  const wait = `too many tool calls from this client; try again in ${retryAfterSeconds} s`;
  return refusal(
    {
      code: "ERR_HOLDER_RATE_LIMITED",
      retryAfterSeconds,
      ...(limit === undefined ? {} : { limit: limit.name }),
    },
    limit === undefined ? wait : `${wait}. ${limit.hint}`,
  );
}

/**
 * A `HolderError` becomes its own code and words (the domain writes them for people and never puts
 * a secret in them); anything else is a fault of ours, answered without detail. Returns undefined
 * for an unexpected error so the caller can log it.
 */
export function refusalFor(error: unknown): CallToolResult | undefined {
  if (error instanceof HolderError) {
    return refusal({ code: error.code }, error.message);
  }
  return undefined;
}

/** How long a caller waits before asking a busy holder again. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** The database was saturated for a moment: the call's transaction rolled back; it may be made again. */
export const busy = (): CallToolResult =>
  refusal(
    { code: "ERR_HOLDER_UNAVAILABLE", retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS },
    `the holder is busy; try again in ${BUSY_RETRY_AFTER_SECONDS} s`,
  );

export const internalError = (): CallToolResult =>
  refusal({ code: "ERR_HOLDER_INTERNAL" }, "the holder could not complete this call; try again later");

// ---------------------------------------------------------------------------------------------
// Views: the only fields that leave the holder

const defined = <T extends Record<string, unknown>>(value: T): T => {
  for (const key of Object.keys(value)) if (value[key] === undefined) delete value[key];
  return value;
};

export function intentView(intent: Intent): Intent {
  return defined({
    id: intent.id,
    status: intent.status,
    statement: intent.statement,
    criteria: intent.criteria === undefined ? undefined : defined({ ...pickCriteria(intent.criteria) }),
    area: defined({ country: intent.area.country, region: intent.area.region }),
    budget:
      intent.budget === undefined
        ? undefined
        : { amount: intent.budget.amount, currency: intent.budget.currency },
    hasHiddenLimit: intent.hasHiddenLimit === true,
    buyBy: intent.buyBy,
    validUntil: intent.validUntil,
    visibility: intent.visibility,
    createdAt: intent.createdAt,
    draftExpiresAt: intent.draftExpiresAt,
  });
}

function pickCriteria(criteria: NonNullable<Intent["criteria"]>): NonNullable<Intent["criteria"]> {
  return {
    category: criteria.category,
    make: criteria.make,
    model: criteria.model,
    yearMin: criteria.yearMin,
    mileageMaxKm: criteria.mileageMaxKm,
    fuel: criteria.fuel,
    kind: criteria.kind,
    roomsMin: criteria.roomsMin,
    areaMinM2: criteria.areaMinM2,
  };
}

export function offerView(offer: Offer): Offer {
  const attributes: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(offer.attributes ?? {})) {
    if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value)))
      attributes[key] = value;
  }
  return defined({
    id: offer.id,
    source: defined({ kind: offer.source.kind, ref: offer.source.ref, seller: offer.source.seller }),
    inReplyTo: offer.inReplyTo,
    title: offer.title,
    description: offer.description,
    category: offer.category,
    price: { amount: offer.price.amount, currency: offer.price.currency },
    location: defined({ country: offer.location.country, region: offer.location.region }),
    url: offer.url,
    attributes,
    publishedAt: offer.publishedAt,
  });
}

export function matchView(match: Match): Match {
  return { offer: offerView(match.offer), deliveredAt: match.deliveredAt };
}

export function demandView(summary: DemandSummary): DemandSummary {
  const cell = defined({
    category: summary.cell.category,
    country: summary.cell.country,
    region: summary.cell.region,
    budgetBand: summary.cell.budgetBand,
  });
  return summary.withheld
    ? { withheld: true, cell, reason: "below-threshold", asOf: summary.asOf }
    : { withheld: false, cell, activeIntents: summary.activeIntents, asOf: summary.asOf };
}
