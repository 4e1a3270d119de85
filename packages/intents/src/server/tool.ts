/**
 * Registers one MCP tool behind the same guard everywhere (holder and forwarder): the rate limit
 * first, then the call, every failure turned into a clear refusal. An `IntentsError` becomes its own
 * code and words; `refuse` may map other known errors; anything else is logged (never with the
 * arguments: they may hold a code, a statement or a hidden limit) and answered without detail.
 */

import type { CallLimit, ToolObserver } from "@doorbell/mcp-endpoint";
import { jsonSchemaOnce } from "@doorbell/mcp-endpoint";
import type {
  AuthInfo,
  CallToolResult,
  McpServer,
  ServerContext,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { z } from "zod";
import { busy, internalError, rateLimited, refusalFor } from "./results.js";
import { endToolSpan, inToolSpan, startToolSpan } from "./tool-span.js";

/** What a tool learns of its HTTP request besides its arguments. */
export interface CallExtra {
  authInfo?: AuthInfo;
  /** A header of the HTTP request that carried the call, if any. */
  header(name: string): string | undefined;
}

export interface ToolGuard {
  /** The calling client's tool-call allowance; none, no limit. */
  limit?: CallLimit;
  /** Added to every description after a blank line. */
  note: string;
  log: Logger;
  /** The log event of an unexpected failure. */
  failedEvent: string;
  /** Told of every call: the tool, its outcome (ok, tool_error, rate_limited, failed) and seconds. */
  observe?: ToolObserver;
  /** A refusal for an error that is not an `IntentsError`, or undefined (an internal error). */
  refuse?: (error: unknown) => CallToolResult | undefined;
  /**
   * Whether a failure means the database was saturated for a moment (answered "busy, try again").
   * Injected so the wire package needs no database: holder and forwarder give store's check.
   */
  isBusy?: (error: unknown) => boolean;
}

export interface ToolConfig<S extends z.ZodObject> {
  title: string;
  description: string;
  inputSchema: S;
  outputSchema?: z.ZodObject;
  annotations: ToolAnnotations;
}

export function registerTool<S extends z.ZodObject>(
  server: McpServer,
  guard: ToolGuard,
  name: string,
  config: ToolConfig<S>,
  run: (args: z.infer<S>, extra: CallExtra) => Promise<CallToolResult>,
): void {
  const call = guardedCall(guard, name, run);
  server.registerTool(
    name,
    {
      ...config,
      inputSchema: jsonSchemaOnce(config.inputSchema),
      ...(config.outputSchema === undefined ? {} : { outputSchema: jsonSchemaOnce(config.outputSchema) }),
      description: `${config.description}\n\n${guard.note}`,
    },
    // The SDK has validated `args` against `inputSchema` (strict) before this runs.
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback type is generic over its own schema types
    ((args: z.infer<S>, ctx: ServerContext) => call(args, callExtra(ctx))) as any,
  );
}

/**
 * A tool's `run` behind the guard: the limit first, then the call, every failure a clear
 * refusal, every outcome observed. `args` must already have passed the tool's input schema.
 * What the SDK calls for a registered tool, and what a quick call beside the SDK calls.
 */
export function guardedCall<A>(
  guard: ToolGuard,
  name: string,
  run: (args: A, extra: CallExtra) => Promise<CallToolResult>,
): (args: A, extra: CallExtra) => Promise<CallToolResult> {
  return async (args, extra) => {
    const started = performance.now();
    const span = startToolSpan(name);
    const done = (outcome: string, result: CallToolResult): CallToolResult => {
      guard.observe?.(name, outcome, (performance.now() - started) / 1000);
      if (span !== undefined) endToolSpan(span, outcome, result);
      return result;
    };
    const verdict = await guard.limit?.();
    if (verdict !== undefined && !verdict.ok)
      return done("rate_limited", rateLimited(verdict.retryAfterSeconds, verdict.limit));
    try {
      const result = await (span === undefined ? run(args, extra) : inToolSpan(span, () => run(args, extra)));
      return done(result.isError === true ? "tool_error" : "ok", result);
    } catch (error) {
      const refused = refusalFor(error) ?? guard.refuse?.(error);
      if (refused !== undefined) return done("tool_error", refused);
      if (guard.isBusy?.(error) === true) {
        guard.log.warn({ event: guard.failedEvent, tool: name, busy: true }, "the database was too busy");
        return done("busy", busy());
      }
      guard.log.error(
        {
          event: guard.failedEvent,
          tool: name,
          error: error instanceof Error ? error.name : typeof error,
        },
        error instanceof Error ? error.message.slice(0, 300) : "a tool failed",
      );
      return done("failed", internalError());
    }
  };
}

function callExtra(ctx: ServerContext): CallExtra {
  const authInfo = ctx.http?.authInfo;
  const request = ctx.http?.req;
  return {
    ...(authInfo === undefined ? {} : { authInfo }),
    header: (name) => request?.headers.get(name) ?? undefined,
  };
}
