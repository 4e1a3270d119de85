// The auth seam: every buyer tool resolves one Principal. Today it comes from the intentCode
// (consent-link rule 4); an OAuth identity arrives through `authenticate` → AuthInfo →
// { kind: "oauth", subject, clientId }, reaching the same service methods. Without either, the
// buyer tools refuse and say what they need.

import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { principalFromAuth } from "../../src/mcp/principal.js";
import type { Principal } from "../../src/model/types.js";
import { activeIntent, refused, startHolder, type TestHolder } from "../support/mcp-harness.js";

describe("principalFromAuth", () => {
  it("turns a verified token with a subject into an OAuth principal, and nothing else", () => {
    const auth: AuthInfo = { token: "t", clientId: "agent-1", scopes: [], extra: { subject: "person-7" } };
    expect(principalFromAuth(auth)).toEqual({ kind: "oauth", subject: "person-7", clientId: "agent-1" });
    expect(principalFromAuth(undefined)).toBeUndefined();
    expect(principalFromAuth({ ...auth, extra: {} })).toBeUndefined();
    expect(principalFromAuth({ ...auth, extra: { subject: 7 } })).toBeUndefined();
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  const seen: { method: string; principal: Principal }[] = [];

  beforeAll(async () => {
    h = await startHolder(engine, {
      mcp: {
        authenticate: async (request) =>
          request.headers.get("authorization") === "Bearer good-token"
            ? {
                token: "good-token",
                clientId: "agent-1",
                scopes: ["intents"],
                extra: { subject: "person-7" },
              }
            : undefined,
      },
      toolServices: (services) => ({
        ...services,
        intents: {
          ...services.intents,
          get: (principal, id) => {
            seen.push({ method: "get", principal });
            return services.intents.get(principal, id);
          },
          update: (principal, id, changes) => {
            seen.push({ method: "update", principal });
            return services.intents.update(principal, id, changes);
          },
        },
      }),
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function signedIn(): Promise<Client> {
    const client = new SdkClient({ name: "signed-in", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(h.mcpUrl, {
        fetch: scopedSignalFetch(),
        requestInit: { headers: { authorization: "Bearer good-token" } },
      }),
    );
    return client;
  }

  it("passes an intentCode principal to the service", async () => {
    const client = await h.connect();
    const { intentCode, intent } = await activeIntent(h, client, "seam@example.sk");
    seen.length = 0;
    await client.callTool({ name: "intent_get_intent", arguments: { intentCode } });
    expect(seen).toEqual([{ method: "get", principal: { kind: "intent-code", intentId: intent.id } }]);
  });

  it("passes an OAuth principal from a verified bearer token to the same service method", async () => {
    const client = await signedIn();
    seen.length = 0;
    const refusal = await refused(client, "intent_update_intent", { id: "int_x", statement: "new words" });
    expect(seen).toEqual([
      { method: "update", principal: { kind: "oauth", subject: "person-7", clientId: "agent-1" } },
    ]);
    // The services do not grant OAuth principals anything yet, and say so.
    expect(refusal.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(refusal.text).toMatch(/OAuth/);
    await client.close();
  });

  it("refuses a buyer tool with neither a code nor a sign-in, before any service call", async () => {
    const client = await h.connect();
    seen.length = 0;
    const refusal = await refused(client, "intent_update_intent", { id: "int_x", statement: "new words" });
    expect(refusal.code).toBe("ERR_HOLDER_FORBIDDEN");
    // Issue 16 item 18: the refusal says what the tool description says (a signed-in person).
    expect(refusal.text).toMatch(/needs the person signed in/);
    expect(seen).toEqual([]);
  });
});
