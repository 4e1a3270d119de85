/**
 * The MCP endpoint as an OAuth 2.1 protected resource, and the built-in authorization server's
 * refusals, against whole holders on loopback (`createHolder` + `listen`), SQLite and PostgreSQL:
 *
 *  - RFC 9728 metadata names this resource and its issuer; RFC 8414 metadata offers S256 only;
 *  - an Authorization header with no token, an unknown token, or another holder's token is 401
 *    with `WWW-Authenticate: Bearer resource_metadata="…"` (and `invalid_token` when one was sent);
 *  - a request without the header still works (consent-link);
 *  - dynamic registration works; an authorization request with PKCE `plain` or none is refused.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/app/holder.js";

async function holderOn(database: string): Promise<{ holder: Holder; url: string; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-oauth-"));
  const net = await import("node:net");
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const holder = await createHolder({
    dataDir: dir,
    database,
    publicUrl: url,
    log: pino({ level: "silent" }),
    events: false,
    oauth: {},
  });
  await holder.listen(port, "127.0.0.1");
  return { holder, url, dir };
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const mcpPost = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(initialize),
  });

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let a: Awaited<ReturnType<typeof holderOn>>;
  let b: Awaited<ReturnType<typeof holderOn>>;
  beforeAll(async () => {
    a = await holderOn(engine.url);
    const other = await engine.createDatabase();
    b = await holderOn(other.url);
  }, 60_000);
  afterAll(async () => {
    await a?.holder.close();
    await b?.holder.close();
  });

  it("publishes protected resource metadata naming this resource and the built-in issuer", async () => {
    const answer = await fetch(`${a.url}/.well-known/oauth-protected-resource/mcp`);
    expect(answer.status).toBe(200);
    const metadata = (await answer.json()) as Record<string, unknown>;
    expect(metadata.resource).toBe(`${a.url}/mcp`);
    expect(metadata.authorization_servers).toEqual([`${a.url}/oauth`]);
    expect(metadata.scopes_supported).toEqual(["intents:read", "intents:manage"]);
  });

  it("serves RFC 8414 metadata that offers PKCE S256 only, registration and revocation", async () => {
    const answer = await fetch(`${a.url}/.well-known/oauth-authorization-server/oauth`);
    expect(answer.status).toBe(200);
    const metadata = (await answer.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(`${a.url}/oauth`);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(typeof metadata.registration_endpoint).toBe("string");
    expect(typeof metadata.revocation_endpoint).toBe("string");
  });

  it("answers an empty bearer header with 401 and a challenge without an error code", async () => {
    const answer = await mcpPost(a.url, { authorization: "Bearer" });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain(
      `Bearer resource_metadata="${a.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(challenge).not.toContain("error=");
  });

  it("answers an unknown token with 401 invalid_token", async () => {
    const answer = await mcpPost(a.url, { authorization: "Bearer not-a-token-of-this-holder" });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("still serves a request without an Authorization header (consent-link)", async () => {
    const answer = await mcpPost(a.url);
    expect(answer.status).toBe(200);
  });

  it("registers a client dynamically and refuses PKCE plain and a missing code challenge", async () => {
    const registered = await fetch(`${a.url}/oauth/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Test assistant",
        redirect_uris: ["http://127.0.0.1:9/callback"],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        application_type: "native",
      }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const client = (await registered.json()) as { client_id: string };
    const authorize = (extra: Record<string, string>) =>
      fetch(
        `${a.url}/oauth/auth?${new URLSearchParams({
          client_id: client.client_id,
          response_type: "code",
          redirect_uri: "http://127.0.0.1:9/callback",
          scope: "intents:read",
          resource: `${a.url}/mcp`,
          state: "s",
          ...extra,
        })}`,
        { redirect: "manual" },
      );
    const attempts: Record<string, string>[] = [
      {},
      { code_challenge: "a".repeat(43), code_challenge_method: "plain" },
    ];
    for (const extra of attempts) {
      const answer = await authorize(extra);
      expect(answer.status).toBe(303);
      const location = new URL(answer.headers.get("location") ?? "");
      expect(location.origin).toBe("http://127.0.0.1:9");
      expect(location.searchParams.get("error")).toBe("invalid_request");
    }
    // With S256 the request goes on to the holder's sign-in page.
    const ok = await authorize({
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    expect(ok.status).toBe(303);
    expect(new URL(ok.headers.get("location") ?? "", a.url).pathname).toMatch(/^\/signin\//);
  });

  it("refuses a redirect URI the client did not register", async () => {
    const registered = await fetch(`${a.url}/oauth/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/callback"], application_type: "native" }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string };
    const answer = await fetch(
      `${a.url}/oauth/auth?${new URLSearchParams({
        client_id: client.client_id,
        response_type: "code",
        redirect_uri: "http://127.0.0.1:9/elsewhere",
        scope: "intents:read",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      })}`,
      { redirect: "manual" },
    );
    // Never redirected to an unregistered URI: the error is shown by the server itself.
    expect(answer.status).toBe(400);
    expect(answer.headers.get("location")).toBeNull();
  });

  it("does not let one holder's client or token work at another holder", async () => {
    const answer = await mcpPost(b.url, { authorization: "Bearer not-a-token-of-this-holder" });
    expect(answer.status).toBe(401);
    const metadata = (await (await fetch(`${b.url}/.well-known/oauth-protected-resource/mcp`)).json()) as {
      resource: string;
    };
    expect(metadata.resource).not.toBe(`${a.url}/mcp`);
  });
});
