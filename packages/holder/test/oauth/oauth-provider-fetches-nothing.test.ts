// The authorization server makes no request of its own. oidc-provider has its own HTTP client,
// outside the egress policy, for a client's `jwks_uri` (and sector identifiers, back-channel
// calls); a client registers itself, so it would choose the address. Here a client registers with
// `private_key_jwt` and a `jwks_uri` on loopback, then authenticates at the token endpoint: the
// address is never connected to, and the client is refused. A whole holder on loopback.
import fs from "node:fs";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeHolders, type HolderOnLoopback, holderOn } from "../support/oauth-harness.js";

let h: HolderOnLoopback;
let honeypot: net.Server;
let connections = 0;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-oauth-fetches-"));

beforeAll(async () => {
  honeypot = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => honeypot.listen(0, "127.0.0.1", resolve));
  h = await holderOn(path.join(dir, "holder.sqlite"));
}, 60_000);
afterAll(async () => {
  await closeHolders(h);
  await new Promise<void>((resolve) => honeypot.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the built-in authorization server", () => {
  it("never fetches a registered client's jwks_uri", async () => {
    const jwksUri = `http://127.0.0.1:${(honeypot.address() as AddressInfo).port}/jwks.json`;
    const registered = await fetch(`${h.origin}/oauth/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "A key-fetching assistant",
        redirect_uris: ["http://127.0.0.1:9/callback"],
        token_endpoint_auth_method: "private_key_jwt",
        token_endpoint_auth_signing_alg: "ES256",
        jwks_uri: jwksUri,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        application_type: "native",
      }),
    });
    const client = (await registered.json()) as { client_id?: string };
    expect(registered.status).toBe(201);
    if (client.client_id !== undefined) {
      const { privateKey } = await generateKeyPair("ES256");
      const tokenEndpoint = `${h.origin}/oauth/token`;
      const assertion = await new SignJWT({})
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(client.client_id)
        .setSubject(client.client_id)
        .setAudience(tokenEndpoint)
        .setJti(crypto.randomUUID())
        .setIssuedAt()
        .setExpirationTime("1m")
        .sign(privateKey);
      const answer = await fetch(tokenEndpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: "not-a-code",
          redirect_uri: "http://127.0.0.1:9/callback",
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: assertion,
        }),
      });
      expect(answer.status).toBe(401);
      expect(await answer.json()).toMatchObject({ error: "invalid_client" });
    }
    // Time for a fetch the provider might make in the background.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
  }, 30_000);
});
