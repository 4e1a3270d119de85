/**
 * The one place a buyer tool learns who it acts for: the `intentCode` argument (consent-link rule
 * 4, via `IntentService.principalForCode`) or a verified OAuth token's AuthInfo, which becomes
 * `{ kind: "oauth", subject, clientId, scopes }`. The services decide what a principal may do.
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import { RESOURCE_SCOPES } from "../model/scopes.js";
import type { IntentService } from "../model/services.js";
import { HolderError, type Principal } from "../model/types.js";

/** An OAuth principal from a verified token; undefined otherwise. */
export function principalFromAuth(authInfo: AuthInfo | undefined): Principal | undefined {
  const subject = authInfo?.extra?.subject;
  if (authInfo === undefined || typeof subject !== "string" || subject === "") return undefined;
  // The token's scopes the holder knows travel with the principal; the services check them.
  const scopes = authInfo.scopes.filter((scope) => (RESOURCE_SCOPES as readonly string[]).includes(scope));
  return { kind: "oauth", subject, clientId: authInfo.clientId, ...(scopes.length === 0 ? {} : { scopes }) };
}

/** The one place a buyer tool learns who it acts for. */
export async function buyerPrincipal(
  intents: IntentService,
  intentCode: string | undefined,
  authInfo: AuthInfo | undefined,
  needs = NEEDS_CODE_OR_SIGN_IN,
): Promise<Principal> {
  if (intentCode !== undefined) {
    const principal = await intents.principalForCode(intentCode);
    if (principal === undefined) {
      throw new HolderError(
        "ERR_HOLDER_NOT_FOUND",
        "no intent has this intentCode (check it was copied whole; a draft nobody confirmed ends after 24 hours)",
      );
    }
    return principal;
  }
  const oauth = principalFromAuth(authInfo);
  if (oauth !== undefined) return oauth;
  throw new HolderError("ERR_HOLDER_FORBIDDEN", needs);
}

export const NEEDS_CODE_OR_SIGN_IN =
  "this tool needs the intentCode that intent_publish_intent returned, or the person signed in with OAuth where this holder offers it (its /.well-known/oauth-protected-resource says so)";
export const NEEDS_SIGN_IN =
  "changing an intent needs the person signed in with OAuth where this holder offers it (its /.well-known/oauth-protected-resource says so); an intentCode cannot change an intent, so withdraw it and publish a new one instead";
