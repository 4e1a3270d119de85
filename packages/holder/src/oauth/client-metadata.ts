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
 */
import { type EgressPolicy, getJson } from "@doorbell/webhooks";
import type { AdapterPayload } from "./adapter.js";

export type ClientMetadataResolver = (clientId: string) => Promise<AdapterPayload | undefined>;

const PASSED = ["client_name", "client_uri", "logo_uri", "policy_uri", "tos_uri", "scope"] as const;
const CACHE_MS = 5 * 60_000;
const CACHE_SIZE = 500;

export function clientMetadataResolver(options: {
  policy: EgressPolicy;
  now?: () => number;
  onRefused?: (reason: string) => void;
}): ClientMetadataResolver {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: AdapterPayload | undefined }>();

  async function fetchDocument(clientId: string): Promise<AdapterPayload | undefined> {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return undefined;
    }
    // The draft: https, a path, no fragment, no credentials, no dot segments.
    if (url.protocol !== "https:" || url.pathname === "/" || url.hash !== "" || url.username !== "") {
      return undefined;
    }
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
    const hit = cache.get(clientId);
    if (hit !== undefined && now() - hit.at < CACHE_MS) return hit.value;
    const value = await fetchDocument(clientId);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(clientId, { at: now(), value });
    return value;
  };
}
