/** Who may act on which intent: an intentCode on its own, a signed-in client on its person's. */
import { SCOPE_READ } from "../model/scopes.js";
import { HolderError, type Principal } from "../model/types.js";
import type { Intents, OAuthPrincipal } from "./context.js";
import { invalid, isRecord } from "./validate.js";

export function requireScope(principal: OAuthPrincipal, scope: string): void {
  if (!(principal.scopes ?? []).includes(scope)) {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      `this needs the ${scope} scope, which the person did not grant to this assistant`,
    );
  }
}

/** The intent a principal may act on, or a refusal that says why in plain words. */
export async function authorize(
  intents: Intents,
  principal: Principal,
  id: string | undefined,
  scope: string = SCOPE_READ,
): Promise<string> {
  const { options } = intents;
  if (!isRecord(principal)) throw new HolderError("ERR_HOLDER_FORBIDDEN", "no principal was given");
  if (id !== undefined && (typeof id !== "string" || id.length > 100))
    throw invalid("id must be an intent id");
  if (principal.kind === "intent-code") {
    if (id !== undefined && id !== principal.intentId) {
      throw new HolderError("ERR_HOLDER_FORBIDDEN", "an intentCode gives access to its own intent only");
    }
    return principal.intentId;
  }
  if (principal.kind === "oauth") {
    if (id === undefined) throw invalid("id is required when signed in");
    if (options.oauthAccess === undefined) {
      throw new HolderError(
        "ERR_HOLDER_FORBIDDEN",
        "sign-in (OAuth) is not available on this holder yet; use the intentCode",
      );
    }
    requireScope(principal, scope);
    if (!(await options.oauthAccess(principal, id))) {
      throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent for this sign-in");
    }
    return id;
  }
  throw new HolderError("ERR_HOLDER_FORBIDDEN", "unknown kind of principal");
}
