/**
 * The holder's built-in authorization server: oidc-provider 8 (OpenID Certified) mounted under
 * `/oauth`, its state in `@doorbell/store` through the adapter of adapter.ts. No token code is
 * written here; this module only configures the library:
 *
 *  - authorization code with PKCE, S256 only and required of every client (plain and none refused);
 *  - resource indicators (RFC 8707): the only resource is this holder's MCP endpoint; an access
 *    token is issued for it alone (audience = the endpoint's URL), opaque, so the holder checks it
 *    against the store and a revoked grant stops working at once;
 *  - refresh tokens for clients allowed the grant, rotated on every use (a used one is dead);
 *  - revocation (RFC 7009), open dynamic client registration (RFC 7591), metadata (RFC 8414, also
 *    served at the RFC 8414 path by the holder's Node server), client ID metadata documents;
 *  - sign-in and consent are the holder's own pages (`interactions.url` → /signin/<uid>).
 */
import { type IncomingMessage, ServerResponse } from "node:http";
import type { CodeHasher, Database, Sealer } from "@doorbell/store";
import Provider, { errors } from "oidc-provider";
import type { Logger } from "pino";
import { ISSUER_PATH, RESOURCE_SCOPES, SIGNIN_PATH } from "../model/scopes.js";
import { responseAbandoned } from "../observability/client-gone.js";
import type { ClientMetadataResolver } from "./adapter.js";
import { createStoreAdapter } from "./adapter.js";
import { checkClientMetadata } from "./client-policy.js";
import { oauthErrorPage } from "./error-page.js";
import { loadProviderKeys } from "./keys.js";
import { type ProviderRoute, type RouteGuard, routeProvider } from "./provider-routes.js";
import type { OAuthTables } from "./schema.js";

export interface AuthorizationServerOptions {
  store: Database<OAuthTables>;
  sealer: Sealer;
  codes: CodeHasher;
  /** The holder's public origin: the issuer is `<publicUrl>/oauth`. */
  publicUrl: string;
  /** The protected resource (the MCP endpoint's URL). */
  resource: string;
  clientMetadata?: ClientMetadataResolver;
  /**
   * Lifetimes in seconds (defaults: access 1 h, refresh 14 days, code 60 s, sign-in 10 min, a
   * registered client that no person ever allowed 24 h).
   */
  ttl?: {
    accessToken?: number;
    refreshToken?: number;
    authorizationCode?: number;
    interaction?: number;
    unusedClient?: number;
  };
  /** Shown on the provider's error pages. */
  holderName?: string;
  /**
   * Asked before a route is served, with the route the provider's router picked (every spelling
   * it accepts is the same route); an answer it gives is sent instead. The registration limit.
   */
  guard?: RouteGuard;
  log: Logger;
}

/** Every scope the provider knows: OpenID's two and the holder's resource scopes. */
const OFFERED_SCOPES: ReadonlySet<string> = new Set(["openid", "offline_access", ...RESOURCE_SCOPES]);

export interface AuthorizationServer {
  readonly provider: Provider;
  readonly issuer: string;
  /** The Node handler for every path under `/oauth` (the prefix still on `req.url`). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** The route the provider's router picked for a request `handle` was given; none when it had none. */
  routeOf(req: IncomingMessage): ProviderRoute | undefined;
}

export async function createAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServer> {
  const issuer = `${options.publicUrl}${ISSUER_PATH}`;
  const keys = await loadProviderKeys(options.store, options.sealer);
  const ttl = options.ttl ?? {};
  const resourceScope = RESOURCE_SCOPES.join(" ");

  const provider = new Provider(issuer, {
    adapter: createStoreAdapter({
      store: options.store,
      sealer: options.sealer,
      codes: options.codes,
      ...(options.clientMetadata === undefined ? {} : { clientMetadata: options.clientMetadata }),
      unusedClientTtlSeconds: ttl.unusedClient ?? 24 * 3600,
    }),
    // The validator runs for every client the provider loads (registered, stored,
    // client ID metadata documents); listing one recognised property is what makes it run.
    extraClientMetadata: {
      properties: ["client_name"],
      validator: (_ctx: unknown, _key: string, _value: unknown, metadata: Record<string, unknown>) =>
        checkClientMetadata(metadata),
    },
    // Errors in the holder's layout and headers, no third-party request.
    renderError: oauthErrorPage(options.holderName ?? "Doorbell intent holder"),
    // Client ID metadata documents are the preferred registration; DCR stays
    // (deprecated by MCP 2026-07-28).
    discovery: { client_id_metadata_document_supported: true },
    clients: [],
    jwks: keys.jwks,
    cookies: { keys: keys.cookieKeys, long: { signed: true }, short: { signed: true } },
    // The account is the holder's opaque account id; no personal data is released as a claim.
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    claims: { openid: ["sub"] },
    scopes: ["openid", "offline_access", ...RESOURCE_SCOPES],
    responseTypes: ["code"],
    pkce: { methods: ["S256"], required: () => true },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      // The provider's one key is ES256 (keys.ts).
      id_token_signed_response_alg: "ES256",
    },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: true,
    clientBasedCORS: () => true,
    // The provider's own HTTP client (a client's jwks_uri, sector identifiers, back-channel calls)
    // is outside the egress policy and a client would choose its address: it is never used.
    httpOptions: () => {
      throw new Error("this authorization server makes no outbound requests");
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${SIGNIN_PATH}/${interaction.uid}`,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx: { oidc?: { params?: { scope?: unknown } } }, indicator: string) => {
          if (indicator !== options.resource) {
            throw new errors.InvalidTarget(
              "this authorization server issues tokens for its holder's MCP endpoint only",
            );
          }
          // The provider silently drops a scope it does not know; asking for one is refused instead
          // (an assistant must not be shown a consent page for less than it believes it asked for).
          const requested = ctx.oidc?.params?.scope;
          const unknown =
            typeof requested === "string"
              ? requested.split(" ").find((scope) => scope !== "" && !OFFERED_SCOPES.has(scope))
              : undefined;
          if (unknown !== undefined) {
            throw new errors.InvalidScope("this holder does not offer the requested scope", unknown);
          }
          return {
            scope: resourceScope,
            audience: options.resource,
            accessTokenFormat: "opaque",
            accessTokenTTL: ttl.accessToken ?? 3600,
          };
        },
      },
    },
    ttl: {
      AccessToken: ttl.accessToken ?? 3600,
      AuthorizationCode: ttl.authorizationCode ?? 60,
      RefreshToken: ttl.refreshToken ?? 14 * 24 * 3600,
      Interaction: ttl.interaction ?? 600,
      Session: 3600,
      Grant: 365 * 24 * 3600,
      IdToken: 3600,
    },
  });
  // A request whose client hung up (mid-body, say) failed by the client's doing: at debug, and
  // never as the server's error. Both events pass the Koa context, which holds the response.
  const failed = (event: string, error: unknown, ctx: unknown) => {
    const name = error instanceof Error ? error.name : typeof error;
    const res = (ctx as { res?: unknown } | undefined)?.res;
    if (res instanceof ServerResponse && responseAbandoned(res)) {
      options.log.debug({ event: "oauth.client_closed", error: name }, "the client closed the request");
      return;
    }
    options.log.error({ event, error: name }, String((error as Error)?.message ?? "").slice(0, 200));
  };
  // Koa's own error channel, where a connection that failed under a request lands. Listening
  // replaces Koa's default, which prints each one to stderr.
  provider.app.on("error", (error, ctx) => failed("oauth.request_failed", error, ctx));
  provider.on("server_error", (ctx, error) => failed("oauth.server_error", error, ctx));

  const routes = routeProvider(provider, options.guard);
  const callback = provider.callback();
  return {
    provider,
    issuer,
    routeOf: routes.routeOf,
    handle(req, res) {
      // Mounted like Express mounts it: the provider sees its own paths and finds its mount path
      // from originalUrl (oidc_context.urlFor).
      const original = req.url ?? "/";
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = original;
      req.url = original.slice(ISSUER_PATH.length) || "/";
      callback(req, res);
    },
  };
}
