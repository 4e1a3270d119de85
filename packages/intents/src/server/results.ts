/**
 * What a tool answers: a success carries its structured result twice (as JSON text for models and
 * as `structuredContent` for programs); a refusal is `isError: true` with plain words, the stable
 * `IntentsError` code and, for rate limits, the seconds to wait. The holder's views (explicit field
 * lists, binding rule 1) build what a success carries.
 */

import type { LimitNote } from "@doorbell/mcp-endpoint";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { IntentsError, type IntentsErrorCode } from "../errors.js";

/** The `_meta` key of a refusal's machine-readable part. */
export const ERROR_META_KEY = "io.doorbell/error";

export interface ToolErrorMeta {
  code: IntentsErrorCode | "ERR_HOLDER_INTERNAL";
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
 * An `IntentsError` (the holder's `HolderError` is one) becomes its own code and words (the domain
 * writes them for people and never puts a secret in them); anything else is a fault of ours,
 * answered without detail. Returns undefined for an unexpected error so the caller can log it.
 */
export function refusalFor(error: unknown): CallToolResult | undefined {
  if (error instanceof IntentsError) {
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
