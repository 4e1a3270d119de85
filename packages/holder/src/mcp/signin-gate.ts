/**
 * MCP authorization for tools that need a signed-in person. Without a session, every request
 * carries its own token; a call that cannot succeed without one is answered the way OAuth-capable
 * clients act on — HTTP 401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` — so
 * the client starts sign-in by itself instead of reading a tool error it cannot act on.
 *
 * Which calls: `intent_update_intent` (an intentCode never changes an intent), and every buyer tool
 * called with neither an intentCode nor a token. The intentCode flow never meets the challenge.
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import { SCOPE_MANAGE, SCOPE_READ } from "../oauth/scopes.js";

/** Buyer tools and the scope a token needs for them. */
const SIGNED_IN_TOOLS: Readonly<Record<string, string>> = {
  intent_get_intent: SCOPE_READ,
  intent_list_matches: SCOPE_READ,
  intent_update_intent: SCOPE_MANAGE,
  intent_withdraw_intent: SCOPE_MANAGE,
  intent_subscribe_events: SCOPE_READ,
  intent_unsubscribe_events: SCOPE_READ,
};
const NEVER_BY_CODE = new Set(["intent_update_intent"]);

interface ToolCall {
  id: unknown;
  name: string;
  hasCode: boolean;
}

function toolCallOf(message: unknown): ToolCall | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
  if (method !== "tools/call" || typeof params !== "object" || params === null) return undefined;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string") return undefined;
  const code =
    typeof args === "object" && args !== null ? (args as { intentCode?: unknown }).intentCode : undefined;
  return { id, name, hasCode: typeof code === "string" && code !== "" };
}

/** The endpoint's `gate`: the 401 challenge for a call that needs sign-in, else undefined. */
export function signInGate(metadataUrl: string) {
  return (message: unknown, authInfo: AuthInfo | undefined): Response | undefined => {
    if (authInfo !== undefined) return undefined;
    const call = toolCallOf(message);
    if (call === undefined) return undefined;
    const scope = SIGNED_IN_TOOLS[call.name];
    if (scope === undefined || (call.hasCode && !NEVER_BY_CODE.has(call.name))) return undefined;
    const description = NEVER_BY_CODE.has(call.name)
      ? "changing an intent needs the person signed in"
      : "this tool needs the intentCode or the person signed in";
    return new Response(
      JSON.stringify({
        jsonrpc: "2.0",
        id: call.id ?? null,
        error: { code: -32001, message: `${description}: sign in with OAuth (see resource_metadata)` },
      }),
      {
        status: 401,
        headers: {
          "content-type": "application/json",
          "cache-control": "no-store",
          "www-authenticate": `Bearer resource_metadata="${metadataUrl}", scope="${scope}", error_description="${description}"`,
        },
      },
    );
  };
}
