/**
 * The OAuth 2.1 profile of the holder's buyer tools, put together for createHolder:
 * the built-in authorization server (provider.ts) or an external issuer, the protected resource
 * (resource.ts), the sign-in and consent pages, intent ownership (owners.ts) and what the
 * holder's Node server must route to the provider.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EgressPolicy } from "@doorbell/webhooks";
import type { Hono } from "hono";
import { hostRefused } from "../html/host-guard.js";
import type { IntentServiceOptions } from "../intents/index.js";
import { type HolderLimits, operatorHintText, peerAddress } from "../limits/index.js";
import { ISSUER_PATH } from "../model/scopes.js";
import { purgeExpiredModels } from "./adapter.js";
import { clientMetadataResolver } from "./client-metadata.js";
import { type AssistantAccessService, assistantAccess, intentOwnership } from "./owners.js";
import { oauthPages } from "./pages/index.js";
import { createAuthorizationServer } from "./provider.js";
import type { RouteGuard, RouteRefusal } from "./provider-routes.js";
import {
  builtInVerifier,
  type ExternalIssuer,
  externalVerifier,
  type ProtectedResource,
  protectedResource,
} from "./resource.js";
import type { SignInContext } from "./signin.js";

export {
  ISSUER_PATH,
  PROTECTED_RESOURCE_PATH,
  SCOPE_MANAGE,
  SCOPE_READ,
  SIGNIN_PATH,
} from "../model/scopes.js";
export {
  type AssistantAccess,
  type AssistantAccessService,
  assistantsOfIntent,
  type IntentAssistants,
} from "./owners.js";
export type { ExternalIssuer, ProtectedResource } from "./resource.js";
export { type OAuthTables, oauthMigrations } from "./schema.js";

export interface HolderOAuthOptions {
  /** Use this issuer's tokens (JWTs checked against its JWKS) instead of the built-in server. */
  external?: ExternalIssuer;
  /** Lifetimes of the built-in server, in seconds (`unusedClient`: a registration no one allowed). */
  ttl?: {
    accessToken?: number;
    refreshToken?: number;
    authorizationCode?: number;
    interaction?: number;
    unusedClient?: number;
  };
}

/** A path the Node server hands to a Node handler instead of the web-standard app. */
export interface NodeRoute {
  matches(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * The route a handled request took, as a metrics label: a pattern of the handler's own routes
   * (`/oauth/auth/:uid`), never the path the client sent; undefined when it took none.
   */
  routeOf(req: IncomingMessage): string | undefined;
}

export interface HolderOAuth {
  readonly resource: ProtectedResource;
  /** The intent service's OAuth options (ownership, publishing for the signed-in person). */
  readonly intentOptions: IntentServiceOptions;
  /** The built-in server's paths (none with an external issuer). */
  readonly nodeRoutes: NodeRoute[];
  /** The sign-in and consent pages, composed with `app.route("/", pages)` (none with an external issuer). */
  readonly pages?: Hono;
  /** The manage page's list of assistants and revocation (built-in server only). */
  readonly access?: AssistantAccessService;
  /** Deletes ended codes, tokens, sessions and clients never allowed (built-in server only). */
  purgeExpired(): Promise<number>;
}

/**
 * Dynamic registrations per client address, on the route the provider's router picked: every
 * spelling of it (`/oauth/reg/`, `/oauth/REG`…) counts against the one limit.
 */
function registrationLimit(limits: HolderLimits): RouteGuard {
  return async (route, req): Promise<RouteRefusal | undefined> => {
    if (route.name !== "registration") return undefined;
    const key = limits.clientKey(peerAddress({ incoming: req }), req.headers);
    if (key === undefined) return undefined;
    let verdict: Awaited<ReturnType<HolderLimits["consume"]>>;
    try {
      verdict = await limits.consume("oauth.register", key);
    } catch {
      return { status: 503, headers: { "retry-after": "5", "cache-control": "no-store" }, body: "" };
    }
    if (verdict.ok) return undefined;
    return {
      status: 429,
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        "retry-after": String(verdict.retryAfterSeconds),
      },
      body: JSON.stringify({
        error: "invalid_request",
        error_description: `too many client registrations from this address; try again in ${verdict.retryAfterSeconds} seconds. ${operatorHintText(limits.hint("oauth.register"))}`,
      }),
    };
  };
}

/** RFC 8414 §3: the metadata of issuer `<origin>/oauth` is at this path. */
const RFC8414_PATH = `/.well-known/oauth-authorization-server${ISSUER_PATH}`;

export async function createHolderOAuth(
  ctx: SignInContext,
  options: HolderOAuthOptions & {
    resource: string;
    egress: EgressPolicy;
    /** The shared limits (sign-in mails, registrations per address). */
    limits?: HolderLimits;
    /** The Host allow-list, applied to the provider's Node routes too. */
    hostAllowed?: (host: string | undefined) => boolean;
  },
): Promise<HolderOAuth> {
  const { resource } = options;
  const limits = options.limits;
  const ownership = {
    ...intentOwnership(ctx),
    // Renewal offers mailed to the person, a few per intent per hour.
    ...(limits === undefined
      ? {}
      : {
          allowRenewalOffer: async (intentId: string) => {
            const verdict = await limits.consume("mail.interaction", `renewal:${intentId}`);
            return verdict.ok
              ? verdict
              : { ...verdict, hint: operatorHintText(limits.hint("mail.interaction")) };
          },
        }),
  };
  if (options.external !== undefined) {
    return {
      resource: protectedResource({
        resource,
        publicUrl: ctx.config.publicUrl,
        authorizationServer: options.external.issuer,
        verify: externalVerifier(options.external, resource),
        name: ctx.config.name,
      }),
      intentOptions: ownership,
      nodeRoutes: [],
      purgeExpired: async () => 0,
    };
  }
  const server = await createAuthorizationServer({
    store: ctx.store,
    sealer: ctx.sealer,
    codes: ctx.codes,
    publicUrl: ctx.config.publicUrl,
    resource,
    clientMetadata: clientMetadataResolver({ policy: options.egress }),
    ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    holderName: ctx.config.name,
    ...(limits === undefined ? {} : { guard: registrationLimit(limits) }),
    log: ctx.log,
  });
  const { hostAllowed } = options;
  return {
    resource: protectedResource({
      resource,
      publicUrl: ctx.config.publicUrl,
      authorizationServer: server.issuer,
      verify: builtInVerifier(server.provider, resource),
      name: ctx.config.name,
    }),
    intentOptions: ownership,
    nodeRoutes: [
      {
        matches: (path) =>
          path === ISSUER_PATH || path.startsWith(`${ISSUER_PATH}/`) || path === RFC8414_PATH,
        handle(req, res) {
          const path = (req.url ?? "").split("?")[0];
          if (hostAllowed !== undefined && !hostAllowed(req.headers.host)) {
            const refused = hostRefused(path ?? "");
            const headers: Record<string, string> = {};
            refused.headers.forEach((value, name) => {
              headers[name] = value;
            });
            res.writeHead(refused.status, headers);
            refused.text().then((body) => res.end(body));
            return;
          }
          // The provider serves its metadata at <issuer>/.well-known/openid-configuration; RFC 8414
          // puts it at /.well-known/oauth-authorization-server/oauth. Same document.
          if ((req.url ?? "").split("?")[0] === RFC8414_PATH)
            req.url = `${ISSUER_PATH}/.well-known/openid-configuration`;
          server.handle(req, res);
        },
        routeOf(req) {
          const route = server.routeOf(req);
          return route === undefined ? undefined : `${ISSUER_PATH}${route.pattern}`;
        },
      },
    ],
    pages: oauthPages({
      provider: server.provider,
      signIn: ctx,
      config: ctx.config,
      resource,
      log: ctx.log,
      ...(limits === undefined ? {} : { limits }),
    }),
    access: assistantAccess(ctx, server.provider, resource),
    purgeExpired: () => purgeExpiredModels(ctx.store, Date.now()),
  };
}
