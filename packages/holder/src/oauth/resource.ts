/**
 * The MCP endpoint as an OAuth 2.1 protected resource (MCP authorization 2025-11-25):
 *
 *  - protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource/mcp` (the
 *    path-aware place) and at the root well-known path;
 *  - a request that carries an `Authorization` header must carry a good bearer token for this
 *    resource: otherwise 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1)
 *    and `error="invalid_token"` (RFC 6750 §3.1). A request without the header goes on unsigned
 *    (the consent-link profile: the intentCode is the key there);
 *  - the verifier behind it: the built-in server's opaque tokens are looked up in its store
 *    (`provider.AccessToken.find`), an external issuer's JWTs are checked with jose against its
 *    JWKS (issuer, audience = this resource, expiry).
 *
 * A good token becomes the SDK's `AuthInfo` with `extra.subject`, the account the token acts for;
 * the MCP tools turn it into an OAuth principal (mcp/tools.ts).
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { Provider } from "oidc-provider";
import { PROTECTED_RESOURCE_PATH, RESOURCE_SCOPES } from "../model/scopes.js";

export type TokenVerdict =
  | { ok: true; authInfo: AuthInfo }
  | { ok: false; error: "invalid_request" | "invalid_token"; description: string }
  /** RFC 6750 §3.1: a request with no token at all gets a challenge without an error code. */
  | { ok: false; error: undefined; description: string };

/** Checks one bearer token for this resource. */
export type TokenVerifier = (token: string) => Promise<TokenVerdict>;

const invalidToken = (description: string): TokenVerdict => ({
  ok: false,
  error: "invalid_token",
  description,
});

const scopesOf = (value: unknown): string[] =>
  typeof value === "string" ? value.split(" ").filter((scope) => scope !== "") : [];

/** The built-in server's tokens: found in its store, unexpired, for this resource, grant alive. */
export function builtInVerifier(provider: Provider, resource: string): TokenVerifier {
  return async (token) => {
    const found = await provider.AccessToken.find(token);
    if (found === undefined) return invalidToken("the access token is unknown, revoked or expired");
    if (found.isExpired) return invalidToken("the access token has expired");
    const audiences = Array.isArray(found.aud) ? found.aud : found.aud === undefined ? [] : [found.aud];
    if (!audiences.includes(resource)) return invalidToken("the access token is not for this resource");
    if ((await provider.Grant.find(found.grantId)) === undefined) {
      return invalidToken("the access token's grant was revoked");
    }
    return {
      ok: true,
      authInfo: {
        token,
        clientId: found.clientId,
        scopes: scopesOf(found.scope),
        expiresAt: found.exp,
        resource: new URL(resource),
        extra: { subject: found.accountId },
      },
    };
  };
}

export interface ExternalIssuer {
  /** The issuer's identifier (the `iss` of its tokens). */
  issuer: string;
  /** Its JWKS; default: `jwks_uri` from its RFC 8414 metadata (then OpenID discovery). */
  jwksUri?: string;
}

/** An external issuer's JWT access tokens, checked with jose: signature, iss, aud = resource, exp. */
export function externalVerifier(
  external: ExternalIssuer,
  resource: string,
  fetchImpl: typeof fetch = fetch,
): TokenVerifier {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  async function jwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (keys !== undefined) return keys;
    let uri = external.jwksUri;
    if (uri === undefined) {
      const base = new URL(external.issuer);
      const path = base.pathname === "/" ? "" : base.pathname;
      for (const where of [
        `/.well-known/oauth-authorization-server${path}`,
        `/.well-known/openid-configuration${path}`,
        `${path}/.well-known/openid-configuration`,
      ]) {
        const answer = await fetchImpl(new URL(where, base.origin), {
          headers: { accept: "application/json" },
        });
        if (!answer.ok) continue;
        const metadata = (await answer.json()) as { issuer?: string; jwks_uri?: string };
        if (metadata.issuer === external.issuer && typeof metadata.jwks_uri === "string") {
          uri = metadata.jwks_uri;
          break;
        }
      }
      if (uri === undefined) throw new Error("the external issuer publishes no jwks_uri");
    }
    keys = createRemoteJWKSet(new URL(uri));
    return keys;
  }
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, await jwks(), {
        issuer: external.issuer,
        audience: resource,
        requiredClaims: ["exp", "sub"],
      });
      const clientId = typeof payload.client_id === "string" ? payload.client_id : payload.azp;
      if (typeof clientId !== "string") return invalidToken("the access token names no client");
      return {
        ok: true,
        authInfo: {
          token,
          clientId,
          scopes: scopesOf(payload.scope),
          ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
          resource: new URL(resource),
          extra: { subject: `${external.issuer}#${payload.sub}` },
        },
      };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ERR_JWT_EXPIRED") return invalidToken("the access token has expired");
      if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED") {
        const claim = (error as { claim?: string }).claim;
        return invalidToken(
          claim === "aud"
            ? "the access token is not for this resource"
            : "the access token's claims do not hold",
        );
      }
      return invalidToken("the access token could not be verified");
    }
  };
}

export interface ProtectedResource {
  /** RFC 9728 metadata. */
  readonly metadata: Record<string, unknown>;
  /** Where the metadata is (the `resource_metadata` of the challenge). */
  readonly metadataUrl: string;
  /** Undefined when the request may go on; else the 401 answer with the challenge. */
  challenge(request: Request): Promise<Response | undefined>;
  /** The `authenticate` option of the MCP handler: the request's AuthInfo, if it carries a good token. */
  authenticate(request: Request): Promise<AuthInfo | undefined>;
}

export function protectedResource(options: {
  resource: string;
  publicUrl: string;
  authorizationServer: string;
  verify: TokenVerifier;
  name?: string;
}): ProtectedResource {
  const resourcePath = new URL(options.resource).pathname;
  const metadataUrl = `${options.publicUrl}${PROTECTED_RESOURCE_PATH}${resourcePath === "/" ? "" : resourcePath}`;
  const metadata = {
    resource: options.resource,
    authorization_servers: [options.authorizationServer],
    scopes_supported: [...RESOURCE_SCOPES],
    bearer_methods_supported: ["header"],
    ...(options.name === undefined ? {} : { resource_name: options.name }),
  };
  // One verification per request, shared by the challenge and the MCP handler.
  const verdicts = new WeakMap<Request, Promise<TokenVerdict | undefined>>();

  function verdictOf(request: Request): Promise<TokenVerdict | undefined> {
    let verdict = verdicts.get(request);
    if (verdict === undefined) {
      verdict = (async (): Promise<TokenVerdict | undefined> => {
        const header = request.headers.get("authorization");
        if (header === null) return undefined;
        if (/^Bearer\s*$/i.test(header))
          return { ok: false, error: undefined, description: "no access token was given" };
        const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
        if (match === null || match[1] === undefined) {
          return {
            ok: false,
            error: "invalid_request",
            description: "the Authorization header must be a Bearer token",
          };
        }
        try {
          return await options.verify(match[1]);
        } catch {
          return invalidToken("the access token could not be verified");
        }
      })();
      verdicts.set(request, verdict);
    }
    return verdict;
  }

  return {
    metadata,
    metadataUrl,
    async challenge(request) {
      const verdict = await verdictOf(request);
      if (verdict === undefined || verdict.ok) return undefined;
      const challenge = [
        `Bearer resource_metadata="${metadataUrl}"`,
        `scope="${RESOURCE_SCOPES.join(" ")}"`,
        ...(verdict.error === undefined
          ? []
          : [`error="${verdict.error}"`, `error_description="${verdict.description}"`]),
      ].join(", ");
      return new Response(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: verdict.description }, id: null }),
        {
          status: verdict.error === "invalid_request" ? 400 : 401,
          headers: {
            "content-type": "application/json",
            "www-authenticate": challenge,
            "cache-control": "no-store",
          },
        },
      );
    },
    async authenticate(request) {
      const verdict = await verdictOf(request);
      return verdict?.ok === true ? verdict.authInfo : undefined;
    },
  };
}
