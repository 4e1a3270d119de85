/**
 * What a client may register or describe, applied by oidc-provider to
 * every client it loads: registered ones (RFC 7591), stored ones and client ID metadata documents.
 *
 *  - redirect URIs are https, or http on a loopback address (MCP authorization; OAuth 2.1 §8.4.2):
 *    an authorization code never goes to `http://app.evil.example/cb` or to a custom scheme;
 *  - `client_name` is at most 100 characters and other strings at most 512 (they are shown on
 *    the holder's pages and quoted in its mails);
 *  - at most 10 redirect URIs and 8 KiB of metadata in all;
 *  - a client's `scope` is no ceiling: it is replaced by every scope the holder offers (RFC 7591
 *    lets the server replace a value). MCP clients register with the scope of the first
 *    challenge (`intents:read`) and step up later; a ceiling would refuse that step-up, and a
 *    public client could register again with any scope anyway. What a token carries is what the
 *    person allowed on the consent page.
 */
import { errors } from "oidc-provider";
import { MAX_NAME_CHARS } from "../model/quoting.js";
import { RESOURCE_SCOPES } from "../model/scopes.js";

export const MAX_CLIENT_METADATA_BYTES = 8 * 1024;
export const MAX_CLIENT_STRING_CHARS = 512;
export const MAX_REDIRECT_URIS = 10;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether an authorization code may be sent to this URI. */
export function allowedRedirectUri(value: unknown): boolean {
  if (typeof value !== "string") return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && LOOPBACK.has(url.hostname);
}

/** Every scope the provider offers: OpenID's two and the holder's resource scopes. */
const OFFERED_SCOPES = ["openid", "offline_access", ...RESOURCE_SCOPES].join(" ");

/**
 * Throws the provider's `invalid_client_metadata` / `invalid_redirect_uri` when a rule is broken;
 * sets `scope` to every scope the provider offers, whatever the client registered.
 */
export function checkClientMetadata(metadata: Record<string, unknown>): void {
  const invalid = (description: string) => {
    throw new errors.InvalidClientMetadata(description);
  };
  const size = Buffer.byteLength(JSON.stringify(metadata));
  if (size > MAX_CLIENT_METADATA_BYTES) {
    invalid(`the client metadata is ${size} bytes; at most ${MAX_CLIENT_METADATA_BYTES} are accepted`);
  }
  const redirects = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  if (redirects.length > MAX_REDIRECT_URIS)
    invalid(`redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs`);
  for (const uri of redirects) {
    if (!allowedRedirectUri(uri)) {
      // The provider names it invalid_redirect_uri because the text starts with "redirect_uris".
      invalid("redirect_uris must be https URLs, or http URLs on localhost, 127.0.0.1 or [::1]");
    }
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== "string") continue;
    const max = key === "client_name" ? MAX_NAME_CHARS : MAX_CLIENT_STRING_CHARS;
    if (Array.from(value).length > max) invalid(`${key} is longer than ${max} characters`);
  }
  metadata.scope = OFFERED_SCOPES;
}
