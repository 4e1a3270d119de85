/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, the MCP
 * authorization spec's preferred registration): a `client_id` that is an https URL names a JSON
 * document at that URL describing the client. oidc-provider 8 has no support of its own, so the
 * storage adapter answers the provider's client lookup with the fetched document.
 *
 * The fetch goes through `getJson` of `@doorbell/webhooks` (SSRF-safe: the egress policy judges
 * the URL and every address it connects to, no redirects, a size cap and a deadline). The document
 * must name itself as `client_id`, be a public client (`token_endpoint_auth_method` "none", no
 * secret) and list its redirect URIs; only the fields below are passed to the provider.
 *
 * A client_id comes from anyone, so fetches are sparing: concurrent lookups of one document share
 * one fetch, the cache is keyed on the URL in its normal form (a client_id in another spelling is
 * refused, so the key and the id the document must name are one string), and new documents are
 * fetched at a small rate shared by every client: distinct query strings cannot make the holder
 * GET a URL at the client's own rate.
 */
import { type EgressPolicy, getJson } from "@doorbell/webhooks";
import type { AdapterPayload, ClientMetadataResolver } from "./adapter.js";

const PASSED = ["client_name", "client_uri", "logo_uri", "policy_uri", "tos_uri", "scope"] as const;
const CACHE_MS = 5 * 60_000;
const CACHE_SIZE = 500;
/** New documents fetched per minute, shared by all clients: a few assistants signing in at once. */
const DEFAULT_FETCHES_PER_MINUTE = 30;
const MINUTE_MS = 60_000;
const TOO_MANY = "too many new client metadata documents to fetch; try again in a minute";

/** At most `limit` fetches in any sliding minute. */
function fetchBudget(limit: number, now: () => number): () => boolean {
  const recent: number[] = [];
  return () => {
    const at = now();
    while (recent.length > 0 && at - (recent[0] as number) >= MINUTE_MS) recent.shift();
    if (recent.length >= limit) return false;
    recent.push(at);
    return true;
  };
}

export function clientMetadataResolver(options: {
  policy: EgressPolicy;
  now?: () => number;
  onRefused?: (reason: string) => void;
  /** Default 30. */
  maxFetchesPerMinute?: number;
}): ClientMetadataResolver {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: AdapterPayload | undefined }>();
  const inFlight = new Map<string, Promise<AdapterPayload | undefined>>();
  const mayFetch = fetchBudget(options.maxFetchesPerMinute ?? DEFAULT_FETCHES_PER_MINUTE, now);

  /** The client_id as a document URL, or undefined when it is none (or not in its normal form). */
  function documentUrl(clientId: string): URL | undefined {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return undefined;
    }
    // The draft: https, a path, no fragment, no credentials; the parser removes dot segments and
    // lower-cases the host, so an id that is not its own normal form is refused here.
    if (url.protocol !== "https:" || url.pathname === "/" || url.hash !== "" || url.username !== "") {
      return undefined;
    }
    return url.href === clientId ? url : undefined;
  }

  async function fetchDocument(clientId: string, url: URL): Promise<AdapterPayload | undefined> {
    const answer = await getJson({ url, policy: options.policy, maxBytes: 16 * 1024 });
    if (!answer.ok) {
      options.onRefused?.(answer.reason);
      return undefined;
    }
    const doc = answer.json as Record<string, unknown>;
    if (typeof doc !== "object" || doc === null || doc.client_id !== clientId) return undefined;
    if (doc.client_secret !== undefined) return undefined;
    const method = doc.token_endpoint_auth_method ?? "none";
    if (method !== "none") return undefined;
    const redirects = doc.redirect_uris;
    if (
      !Array.isArray(redirects) ||
      redirects.length === 0 ||
      !redirects.every((u) => typeof u === "string")
    ) {
      return undefined;
    }
    const client: AdapterPayload = {
      client_id: clientId,
      redirect_uris: redirects as string[],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: redirects.every((u) => (u as string).startsWith("https:")) ? "web" : "native",
    };
    for (const field of PASSED) if (typeof doc[field] === "string") client[field] = doc[field];
    return client;
  }

  return async (clientId) => {
    const url = documentUrl(clientId);
    if (url === undefined) return undefined;
    const key = url.href;
    const hit = cache.get(key);
    if (hit !== undefined && now() - hit.at < CACHE_MS) return hit.value;
    const pending = inFlight.get(key);
    if (pending !== undefined) return pending;
    if (!mayFetch()) {
      // Not cached: the client is not refused for good, only until the rate allows a fetch.
      options.onRefused?.(TOO_MANY);
      return undefined;
    }
    const fetched = fetchDocument(clientId, url)
      .then((value) => {
        if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(key, { at: now(), value });
        return value;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, fetched);
    return fetched;
  };
}
