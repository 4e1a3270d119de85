/**
 * Sign-in steps up, in both eras, with the SDKs' own OAuth clients against a whole holder on
 * loopback (the person allows on the holder's pages, driven with fetch, oauth-harness.ts):
 *
 *  - 2026-07-28, SDK v2 `OAuthClientProvider`: a call without a token gets the 401 challenge for
 *    `intents:read` and the client signs in for that; `intent_publish_intent` then gets 403
 *    `insufficient_scope` naming `intents:manage`, the client asks the person again for both
 *    scopes, and the publish succeeds for the signed-in person;
 *  - 2025-11-25, the same client in a 2025 session: the same, where the 403 names the scopes the
 *    token has as well, because a 2025 client asks for what the challenge says and nothing more;
 *  - the client registers with the first challenge's scope, and the step-up is still allowed;
 *  - the signed-in input schemas declare `id` and say who sends it; `intent_list_matches` with
 *    `id` (or the binding's `intent`) lists, without either it says that id is required;
 *  - the push tools without an intentCode answer a tool error that asks for it, signed in or not,
 *    never an OAuth challenge.
 */

import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeHolders,
  FormBrowser,
  type HolderOnLoopback,
  holderOn,
  personAllowsByForms,
  signedInClient,
} from "../support/oauth-harness.js";

const PUBLISH = {
  statement: "A family flat with three rooms in Košice, at most 180,000 EUR",
  criteria: { category: "property", kind: "flat", roomsMin: 3 },
  area: { country: "SK", region: "SK-KI" },
  budget: { amount: 180_000, currency: "EUR" },
};
const REDIRECT = "http://127.0.0.1:9/callback";
const DELIVERY = { url: "https://agent.example.com/doorbell", secret: `whsec_${"a".repeat(32)}` };

/** The SDK v2 client's provider, kept in memory; it asks for no scope of its own (the challenge does). */
class MemoryProviderV2 implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrls: URL[] = [];
  readonly expectedState = `state-${Math.random().toString(36).slice(2)}`;
  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test assistant",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state(): string {
    return this.expectedState;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}

/** The holder's scopes an authorization URL asks for or a token carries (the SDK adds offline_access). */
const resourceScopesOf = (from: URL | string | undefined) =>
  (typeof from === "string" ? from : (from?.searchParams.get("scope") ?? ""))
    .split(" ")
    .filter((scope) => scope.startsWith("intents:"))
    .sort();

/** The person allows what the authorization URL asks in their browser; the redirect's parameters. */
async function allows(h: HolderOnLoopback, browser: FormBrowser, url: URL, state: string) {
  const arrived = await personAllowsByForms(h, browser, url.href);
  expect(arrived.origin + arrived.pathname).toBe(REDIRECT);
  expect(arrived.searchParams.get("error"), arrived.href).toBeNull();
  expect(arrived.searchParams.get("state")).toBe(state);
  return arrived.searchParams;
}

const textOf = (result: CallToolResult) =>
  result.content.map((block) => (block.type === "text" ? block.text : "")).join(" ");

/** A raw tools/call with a bearer token: the first request of a session or a modern one. */
async function rawCall(h: HolderOnLoopback, token: string, name: string, args: Record<string, unknown>) {
  const modern = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name,
      arguments: args,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
  return fetch(`${h.origin}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify(modern),
  });
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  const closing: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    h = await holderOn(engine.url);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(closing.map((client) => client.close()));
    await closeHolders(h);
  });

  const METADATA = () => `${h.origin}/.well-known/oauth-protected-resource/mcp`;
  const PUBLISH_NEEDS =
    "intent_publish_intent needs the intents:manage scope, which the person has not granted to this assistant";

  for (const era of ["2026-07-28", "2025-11-25"] as const) {
    it(`${era}: the SDK v2 client signs in for intents:read, steps up on 403 insufficient_scope and publishes`, async () => {
      const provider = new MemoryProviderV2();
      const forbidden: string[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`), {
        authProvider: provider,
        fetch: async (url, init) => {
          const answer = await fetch(url, init);
          if (answer.status === 403) forbidden.push(answer.headers.get("www-authenticate") ?? "");
          return answer;
        },
      });
      const client = new Client(
        { name: "assistant", version: "1.0.0" },
        era === "2026-07-28" ? { versionNegotiation: { mode: "auto" } } : {},
      );
      closing.push(client);
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(era);
      const browser = new FormBrowser(h.origin);

      // 1. No token: reading needs sign-in, and the 401 asks for intents:read only.
      await expect(
        client.callTool({ name: "intent_list_matches", arguments: { id: "int_unknown" } }),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      expect(resourceScopesOf(provider.authorizationUrls[0])).toEqual(["intents:read"]);
      await transport.finishAuth(
        await allows(h, browser, provider.authorizationUrls[0] as URL, provider.expectedState),
      );
      expect(resourceScopesOf(provider.saved?.scope)).toEqual(["intents:read"]);

      // 2. Publishing needs intents:manage: the holder answers 403 insufficient_scope, and the
      //    client steps up by itself: it asks the person again, for both scopes.
      await expect(
        client.callTool({ name: "intent_publish_intent", arguments: PUBLISH }),
      ).rejects.toBeInstanceOf(UnauthorizedError);
      // On 2026-07-28 the scope the call needs; a 2025 session hears the one it holds as well.
      const asked = era === "2026-07-28" ? "intents:manage" : "intents:read intents:manage";
      expect(forbidden).toEqual([
        `Bearer error="insufficient_scope", scope="${asked}", resource_metadata="${METADATA()}", error_description="${PUBLISH_NEEDS}"`,
      ]);
      expect(provider.authorizationUrls).toHaveLength(2);
      expect(resourceScopesOf(provider.authorizationUrls[1])).toEqual(["intents:manage", "intents:read"]);
      await transport.finishAuth(
        await allows(h, browser, provider.authorizationUrls[1] as URL, provider.expectedState),
      );
      expect(resourceScopesOf(provider.saved?.scope)).toEqual(["intents:manage", "intents:read"]);

      // 3. The same publish now succeeds for the signed-in person: active, no consent link.
      const published = (await client.callTool({
        name: "intent_publish_intent",
        arguments: PUBLISH,
      })) as CallToolResult;
      expect(published.isError, textOf(published)).not.toBe(true);
      const { intent, consentUrl } = published.structuredContent as {
        intent: { id: string; status: string };
        consentUrl?: string;
      };
      expect(intent.status).toBe("active");
      expect(consentUrl).toBeUndefined();

      // 4. Signed in, list_matches takes the id its schema declares (or the binding's intent).
      for (const args of [{ id: intent.id }, { intent: intent.id }]) {
        const listed = (await client.callTool({
          name: "intent_list_matches",
          arguments: args,
        })) as CallToolResult;
        expect(listed.isError, textOf(listed)).not.toBe(true);
        expect(listed.structuredContent).toMatchObject({ matches: [] });
      }
      const without = (await client.callTool({
        name: "intent_list_matches",
        arguments: {},
      })) as CallToolResult;
      expect(without.isError).toBe(true);
      expect(textOf(without)).toContain("id is required when signed in");
      const read = (await client.callTool({
        name: "intent_get_intent",
        arguments: { id: intent.id },
      })) as CallToolResult;
      expect(read.structuredContent).toMatchObject({ id: intent.id, status: "active" });
      const withdrawn = (await client.callTool({
        name: "intent_withdraw_intent",
        arguments: { id: intent.id },
      })) as CallToolResult;
      expect(withdrawn.structuredContent).toEqual({ status: "withdrawn" });
      expect(forbidden).toHaveLength(1);
    }, 60_000);
  }

  it("answers 403 insufficient_scope for every scoped tool a token cannot use, and nothing for an intentCode", async () => {
    const reader = await signedInClient(h, { scope: "intents:read" });
    const token = reader.tokens.access_token;
    for (const [name, args, scope] of [
      ["intent_publish_intent", PUBLISH, "intents:manage"],
      ["intent_withdraw_intent", { id: "int_x" }, "intents:manage"],
      ["intent_update_intent", { id: "int_x", statement: "Another flat" }, "intents:manage"],
      ["intent_update_intent", { id: "int_x", validUntil: "2099-01-01" }, "intents:read intents:manage"],
    ] as const) {
      const answer = await rawCall(h, token, name, args);
      expect(answer.status, name).toBe(403);
      expect(answer.headers.get("www-authenticate"), name).toContain(
        `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${h.origin}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(answer.headers.get("cache-control")).toBe("no-store");
    }
    // A token of intents:manage alone cannot read: get and list_matches ask for intents:read.
    const manager = await signedInClient(h, { scope: "intents:manage", browser: reader.browser });
    for (const name of ["intent_get_intent", "intent_list_matches"]) {
      const answer = await rawCall(h, manager.tokens.access_token, name, { id: "int_x" });
      expect(answer.status, name).toBe(403);
      expect(answer.headers.get("www-authenticate"), name).toContain('scope="intents:read"');
    }
    // With the intentCode the code decides: no challenge, the tool answers (here: no such code).
    const byCode = await rawCall(h, manager.tokens.access_token, "intent_get_intent", {
      intentCode: "ic_nothing",
    });
    expect(byCode.status).toBe(200);
    expect(await byCode.text()).toContain("no intent has this intentCode");
  }, 60_000);

  it("publishes signed-in schemas that declare id and say who sends it", async () => {
    const client = new Client(
      { name: "schemas", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    closing.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`)));
    const { tools } = await client.listTools();
    for (const name of ["intent_get_intent", "intent_list_matches", "intent_withdraw_intent"]) {
      const schema = tools.find((t) => t.name === name)?.inputSchema as {
        properties: Record<string, { description?: string }>;
        required?: string[];
      };
      expect(schema.properties.id?.description, name).toMatch(/required when signed in/);
      expect(schema.properties.intentCode?.description, name).toMatch(
        /leave it out when the person is signed in/,
      );
      expect(schema.required ?? [], name).toEqual([]);
      expect(tools.find((t) => t.name === name)?.description, name).toContain("signed in (OAuth), its id");
    }
    // An intentCode caller still sends the code alone.
    const draft = (await client.callTool({
      name: "intent_publish_intent",
      arguments: PUBLISH,
    })) as CallToolResult;
    const { intentCode } = draft.structuredContent as { intentCode: string };
    const listed = (await client.callTool({
      name: "intent_list_matches",
      arguments: { intentCode },
    })) as CallToolResult;
    expect(listed.isError, textOf(listed)).not.toBe(true);
  });

  it("answers the push tools without an intentCode with a tool error that asks for it, signed in or not", async () => {
    const signed = await signedInClient(h);
    const anonymous = new Client(
      { name: "push", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    const withToken = new Client(
      { name: "push", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    const legacy = new LegacyClient({ name: "push", version: "1.0.0" });
    closing.push(anonymous, withToken, legacy);
    await anonymous.connect(new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`)));
    await withToken.connect(
      new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${signed.tokens.access_token}` } },
      }),
    );
    await legacy.connect(new LegacyTransport(new URL(`${h.origin}/mcp`), { fetch: scopedSignalFetch() }));
    for (const client of [anonymous, withToken, legacy]) {
      for (const [name, args] of [
        ["intent_subscribe_events", { delivery: DELIVERY }],
        ["intent_unsubscribe_events", { subscriptionId: "sub_x" }],
      ] as const) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        expect(textOf(result), name).toContain(
          "this tool needs the intentCode that intent_publish_intent returned",
        );
      }
    }
  });
});
