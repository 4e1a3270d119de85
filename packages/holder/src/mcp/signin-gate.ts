/**
 * MCP authorization for the buyer tools, answered before the SDK sees a tools/call, in both eras:
 *
 * - **No token, and the call cannot succeed without one** (`intent_update_intent` always; get,
 *   list_matches and withdraw without an intentCode): HTTP 401 with `WWW-Authenticate: Bearer
 *   resource_metadata="…", scope="…"`, so an OAuth-capable client starts sign-in by itself.
 * - **A token that lacks a scope the call needs** (tool-scopes.ts): HTTP 403 with `Bearer
 *   error="insufficient_scope", scope="…", resource_metadata="…"`, so the client steps up, asks
 *   the person again and retries. On 2026-07-28 `scope` names every scope the call needs (the
 *   client adds what it already holds); a 2025 client asks for what `scope` says instead, so there
 *   it also names the holder's scopes the token already carries, and stepping up loses none.
 *
 * The intentCode flow never meets either challenge, and neither do the push tools: they take the
 * intentCode alone, and their own refusal says so.
 */

import type { Era } from "@doorbell/mcp-endpoint";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { principalFromAuth } from "./principal.js";
import { inOrder, needsSignIn, scopesForCall, type ToolCall, toolCallOf } from "./tool-scopes.js";

/** The endpoint's `gate`: the 401 or 403 challenge for a call the caller cannot make yet, else undefined. */
export function signInGate(metadataUrl: string) {
  return (message: unknown, authInfo: AuthInfo | undefined, era: Era): Response | undefined => {
    const call = toolCallOf(message);
    if (call === undefined) return undefined;
    if (authInfo === undefined) return needsSignIn(call) ? signInChallenge(call, metadataUrl) : undefined;
    const signedIn = principalFromAuth(authInfo);
    if (signedIn?.kind !== "oauth") return undefined;
    const granted = signedIn.scopes ?? [];
    const needed = scopesForCall(call);
    const missing = needed.filter((scope) => !granted.includes(scope));
    if (missing.length === 0) return undefined;
    const asked = era === "modern" ? needed : inOrder([...granted, ...needed]);
    return insufficientScope(call, metadataUrl, asked, missing);
  };
}

function signInChallenge(call: ToolCall, metadataUrl: string): Response {
  const scope = scopesForCall(call).join(" ");
  const description =
    call.name === "intent_update_intent"
      ? "changing an intent needs the person signed in"
      : "this tool needs the intentCode or the person signed in";
  return challenge(call, 401, `${description}: sign in with OAuth (see resource_metadata)`, [
    `resource_metadata="${metadataUrl}"`,
    `scope="${scope}"`,
    `error_description="${description}"`,
  ]);
}

function insufficientScope(
  call: ToolCall,
  metadataUrl: string,
  asked: readonly string[],
  missing: readonly string[],
): Response {
  const description = `${call.name} needs the ${missing.join(" and ")} scope, which the person has not granted to this assistant`;
  return challenge(
    call,
    403,
    `${description}: ask the person again for ${asked.join(" ")} (step-up authorization)`,
    [
      'error="insufficient_scope"',
      `scope="${asked.join(" ")}"`,
      `resource_metadata="${metadataUrl}"`,
      `error_description="${description}"`,
    ],
  );
}

function challenge(call: ToolCall, status: 401 | 403, message: string, params: readonly string[]): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: call.id ?? null, error: { code: -32001, message } }),
    {
      status,
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        "www-authenticate": `Bearer ${params.join(", ")}`,
      },
    },
  );
}
