/**
 * Tokens the holder must refuse, and what a good token may and may not do (issue #8), against
 * whole holders on loopback, SQLite and PostgreSQL. Tokens come from the real flow: a registered
 * client, the person signing in on the holder's own pages (driven with fetch, the link read from
 * the local mailbox) and allowing, the code exchanged with PKCE (oauth-harness.ts).
 *
 *  - an expired access token (a holder whose tokens live 2 s): 401 `invalid_token` with the
 *    RFC 9728 challenge;
 *  - scope escalation: a token of `intents:read` reads its intent but cannot publish, change or
 *    withdraw (403 insufficient_scope), nor refresh into `intents:manage`; a client registered
 *    for `intents:read` may still ask for more (the person decides); a scope the holder does not
 *    offer is refused;
 *  - with a token of `intents:manage`, the person's own intent is changed and withdrawn; a second
 *    assistant of the same person sees nothing of it;
 *  - an external issuer (a JWKS served here, JWTs signed with jose): a JWT for another resource,
 *    expired, or signed by another key is 401; one for this resource is accepted, but publishing
 *    with it is refused (no verified address) and it reaches no intent it did not publish.
 */
import http from "node:http";
import type net from "node:net";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorizationUrl,
  closeHolders,
  connectWith,
  type HolderOnLoopback,
  holderOn,
  mcpInitialize,
  pkce,
  registerClient,
  signedInClient,
  tokenRequest,
  tool,
} from "../support/oauth-harness.js";

const PUBLISH = {
  statement: "A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel", mileageMaxKm: 120_000 },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
};

/** The words of a tool's refusal (fails when the tool did not refuse). */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name} should be refused: ${JSON.stringify(result.content)}`).toBe(true);
  return JSON.stringify(result.content);
}

function expectChallenge(answer: Response, h: HolderOnLoopback): void {
  expect(answer.status).toBe(401);
  const challenge = answer.headers.get("www-authenticate") ?? "";
  expect(challenge).toContain(
    `Bearer resource_metadata="${h.origin}/.well-known/oauth-protected-resource/mcp"`,
  );
  expect(challenge).toContain('error="invalid_token"');
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  describe("the built-in authorization server", () => {
    let a: HolderOnLoopback;
    let short: HolderOnLoopback;
    const clients: Client[] = [];
    const connect = async (h: HolderOnLoopback, token?: string) => {
      const client = await connectWith(h.origin, token);
      clients.push(client);
      return client;
    };
    beforeAll(async () => {
      a = await holderOn(engine.url);
      short = await holderOn((await engine.createDatabase()).url, { ttl: { accessToken: 2 } });
    }, 60_000);
    afterAll(async () => {
      for (const client of clients) await client.close();
      await closeHolders(a, short);
    });

    it("refuses an expired access token with 401 invalid_token and the RFC 9728 challenge", async () => {
      const { tokens } = await signedInClient(short);
      expect(tokens.expires_in).toBeLessThanOrEqual(2);
      expect((await mcpInitialize(short.origin, tokens.access_token)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 3_100));
      expectChallenge(await mcpInitialize(short.origin, tokens.access_token), short);
    }, 20_000);

    it("changes and withdraws the person's own intent with a token; another assistant of theirs sees none of it", async () => {
      const first = await signedInClient(a);
      const signedIn = await connect(a, first.tokens.access_token);
      const published = await tool<{ intent: { id: string; status: string } }>(
        signedIn,
        "intent_publish_intent",
        PUBLISH,
      );
      expect(published.intent.status).toBe("active");
      const id = published.intent.id;

      // A second assistant, the same person (the same browser, already signed in: consent only).
      const second = await signedInClient(a, { browser: first.browser });
      expect(second.clientId).not.toBe(first.clientId);
      const other = await connect(a, second.tokens.access_token);
      for (const [name, args] of [
        ["intent_get_intent", { id }],
        ["intent_list_matches", { intent: id }],
        ["intent_update_intent", { id, statement: "Anything else, please" }],
        ["intent_withdraw_intent", { id }],
      ] as const) {
        const words = await refused(other, name, args);
        expect(words, name).not.toContain("Octavia");
      }

      const updated = await tool<{ id: string; statement: string; status: string }>(
        signedIn,
        "intent_update_intent",
        { id, statement: "A Škoda Octavia combi, diesel, at most 100,000 km, near Bratislava" },
      );
      expect(updated).toMatchObject({ id, status: "active" });
      expect(updated.statement).toContain("100,000 km");
      // Renewing validUntil is the person's own action: not even a tool argument.
      expect(await refused(signedIn, "intent_update_intent", { id, validUntil: "2099-01-01" })).toContain(
        "validUntil",
      );
      expect(await tool(signedIn, "intent_withdraw_intent", { id })).toMatchObject({ status: "withdrawn" });
      expect(await tool(signedIn, "intent_get_intent", { id })).toMatchObject({ id, status: "withdrawn" });
      // Withdrawn or not, the second assistant still sees nothing of it.
      expect(await refused(other, "intent_get_intent", { id })).not.toContain("withdrawn");
    }, 30_000);

    it("gives a token of intents:read no way to publish, change or withdraw, nor to refresh into more", async () => {
      // The person allows both scopes and the assistant publishes; then the same assistant asks
      // for intents:read only (signed in, already allowed: straight back with a code).
      const full = await signedInClient(a);
      const manager = await connect(a, full.tokens.access_token);
      const { intent } = await tool<{ intent: { id: string } }>(manager, "intent_publish_intent", PUBLISH);
      const readOnly = await signedInClient(a, {
        browser: full.browser,
        clientId: full.clientId,
        scope: "intents:read",
      });
      expect(readOnly.tokens.scope).toBe("intents:read");
      const reader = await connect(a, readOnly.tokens.access_token);
      expect(await tool(reader, "intent_get_intent", { id: intent.id })).toMatchObject({ id: intent.id });
      // Each is answered 403 insufficient_scope naming intents:manage (the step-up challenge);
      // this client sends a fixed header and cannot step up, so its call fails.
      for (const [name, args] of [
        ["intent_publish_intent", PUBLISH],
        ["intent_update_intent", { id: intent.id, statement: "Something else entirely" }],
        ["intent_withdraw_intent", { id: intent.id }],
      ] as const) {
        await expect(reader.callTool({ name, arguments: args }), name).rejects.toThrow(
          /needs the intents:manage scope/,
        );
      }
      expect(await tool(manager, "intent_get_intent", { id: intent.id })).toMatchObject({ status: "active" });

      // Its refresh token cannot be turned into intents:manage.
      expect(readOnly.tokens.refresh_token).toBeTruthy();
      const widened = await tokenRequest(a.origin, {
        grant_type: "refresh_token",
        refresh_token: readOnly.tokens.refresh_token as string,
        client_id: readOnly.clientId,
        scope: "intents:read intents:manage",
      });
      expect(widened.status).toBe(400);
      expect(((await widened.json()) as { error: string }).error).toBe("invalid_scope");
    }, 30_000);

    it("lets a client ask for more than it registered (step-up), and refuses a scope the holder does not offer", async () => {
      const redirectUri = "http://127.0.0.1:9/callback";
      const { challenge } = pkce();
      const ask = async (clientId: string, scope: string) => {
        const answer = await fetch(authorizationUrl(a.origin, { clientId, redirectUri, scope, challenge }), {
          redirect: "manual",
        });
        expect(answer.status).toBe(303);
        return new URL(answer.headers.get("location") ?? "", a.origin);
      };
      const readerClient = await registerClient(a.origin, redirectUri, { scope: "intents:read" });
      // A registered scope is no ceiling: the person decides on the consent page.
      const more = await ask(readerClient, "intents:read intents:manage");
      expect(more.origin).toBe(a.origin);
      expect(more.pathname).toMatch(/^\/signin\//);

      const anyClient = await registerClient(a.origin, redirectUri);
      const unknown = await ask(anyClient, "intents:admin");
      expect(unknown.origin).toBe("http://127.0.0.1:9");
      expect(unknown.searchParams.get("error")).toBe("invalid_scope");
    });
  });

  describe("an external issuer", () => {
    let h: HolderOnLoopback;
    let jwksServer: http.Server;
    let key: CryptoKey;
    let strangerKey: CryptoKey;
    const ISSUER = "https://login.example.test";
    const clients: Client[] = [];
    beforeAll(async () => {
      const pair = await generateKeyPair("ES256", { extractable: true });
      key = pair.privateKey as CryptoKey;
      strangerKey = (await generateKeyPair("ES256")).privateKey as CryptoKey;
      const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
      jwksServer = http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ keys: [jwk] }));
      });
      await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
      const { port } = jwksServer.address() as net.AddressInfo;
      h = await holderOn(engine.url, {
        external: { issuer: ISSUER, jwksUri: `http://127.0.0.1:${port}/jwks` },
      });
    }, 60_000);
    afterAll(async () => {
      for (const client of clients) await client.close();
      await closeHolders(h);
      await new Promise<void>((resolve) => jwksServer?.close(() => resolve()));
    });

    const jwt = (claims: { aud?: string; exp?: number | string; signWith?: CryptoKey } = {}) =>
      new SignJWT({ client_id: "external-assistant", scope: "intents:read intents:manage" })
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(ISSUER)
        .setSubject("person-1")
        .setAudience(claims.aud ?? `${h.origin}/mcp`)
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? "5m")
        .sign(claims.signWith ?? key);

    it("names the external issuer in the protected resource metadata", async () => {
      const metadata = (await (
        await fetch(`${h.origin}/.well-known/oauth-protected-resource/mcp`)
      ).json()) as {
        authorization_servers: string[];
      };
      expect(metadata.authorization_servers).toEqual([ISSUER]);
    });

    it("refuses a JWT for another resource, an expired one and one signed by another key", async () => {
      for (const token of [
        await jwt({ aud: "https://other-holder.example.sk/mcp" }),
        await jwt({ exp: Math.floor(Date.now() / 1000) - 120 }),
        await jwt({ signWith: strangerKey }),
      ]) {
        expectChallenge(await mcpInitialize(h.origin, token), h);
      }
      const answer = await mcpInitialize(h.origin, await jwt({ aud: "https://other-holder.example.sk/mcp" }));
      expect(answer.headers.get("www-authenticate")).toContain("not for this resource");
    });

    it("accepts a JWT for this resource, but refuses publishing with it and reaches no other intent", async () => {
      const token = await jwt();
      expect((await mcpInitialize(h.origin, token)).status).toBe(200);
      const signedIn = await connectWith(h.origin, token);
      clients.push(signedIn);
      const words = await refused(signedIn, "intent_publish_intent", PUBLISH);
      expect(words).toContain("ERR_HOLDER_FORBIDDEN");
      expect(words).toContain("publish without a token");

      // An intent published the consent-link way is not this sign-in's.
      const anonymous = await connectWith(h.origin);
      clients.push(anonymous);
      const draft = await tool<{ intent: { id: string } }>(anonymous, "intent_publish_intent", PUBLISH);
      expect(await refused(signedIn, "intent_get_intent", { id: draft.intent.id })).toContain(
        "ERR_HOLDER_NOT_FOUND",
      );
    });
  });
});
