/**
 * What a buyer tool call needs of a signed-in caller: the OAuth scopes its services check, read
 * from the tool's name and arguments before any service runs. The sign-in gate answers from it
 * (signin-gate.ts), so a token that lacks a scope meets the MCP authorization challenge instead of
 * a tool error its client cannot act on.
 *
 * - An intentCode stands for sign-in on the tools it powers (get, list_matches, withdraw): such a
 *   call needs no scope at all.
 * - `intent_publish_intent` works without a token too (the consent link); with one, it publishes
 *   for the signed-in person and needs `intents:manage`.
 * - `intent_update_intent` never works by code; an offered renewal also reads the intent back.
 * - The push tools and the public tools need no scope: a signed-in caller cannot use the push
 *   tools at all (they take the intentCode), so no sign-in could help.
 */
import { RESOURCE_SCOPES, SCOPE_MANAGE, SCOPE_READ } from "../model/scopes.js";

/** A parsed `tools/call`: its JSON-RPC id, the tool and its arguments (an object, else empty). */
export interface ToolCall {
  id: unknown;
  name: string;
  args: Readonly<Record<string, unknown>>;
}

export function toolCallOf(message: unknown): ToolCall | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
  if (method !== "tools/call" || typeof params !== "object" || params === null) return undefined;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") return undefined;
  const given =
    typeof args === "object" && args !== null && !Array.isArray(args)
      ? (args as Record<string, unknown>)
      : {};
  return { id, name, args: given };
}

/** The tools an intentCode powers in place of sign-in (consent-link rule 4). */
const POWERED_BY_CODE = new Set(["intent_get_intent", "intent_list_matches", "intent_withdraw_intent"]);

const hasCode = (call: ToolCall): boolean =>
  typeof call.args.intentCode === "string" && call.args.intentCode !== "";

/** The scopes a signed-in caller needs for this call, in the holder's order; none: empty. */
export function scopesForCall(call: ToolCall): readonly string[] {
  if (POWERED_BY_CODE.has(call.name) && hasCode(call)) return [];
  switch (call.name) {
    case "intent_get_intent":
    case "intent_list_matches":
      return [SCOPE_READ];
    case "intent_publish_intent":
    case "intent_withdraw_intent":
      return [SCOPE_MANAGE];
    case "intent_update_intent":
      return call.args.validUntil === undefined ? [SCOPE_MANAGE] : inOrder([SCOPE_MANAGE, SCOPE_READ]);
    default:
      return [];
  }
}

/** Whether this call can only succeed signed in: no token means the 401 sign-in challenge. */
export function needsSignIn(call: ToolCall): boolean {
  return call.name !== "intent_publish_intent" && scopesForCall(call).length > 0;
}

/** Scopes in the order the holder publishes them (scopes_supported), each once. */
export function inOrder(scopes: Iterable<string>): string[] {
  const wanted = new Set(scopes);
  return RESOURCE_SCOPES.filter((scope) => wanted.has(scope));
}
