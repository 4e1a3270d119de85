// Every outbound request of the product goes through the egress policy, or is on this list with
// the reason it need not: a request to an address the operator configured (never one a client,
// a peer or a subscriber chose), or the egress itself. A new `fetch`, node client, or request-
// sending library in `packages/*/src` fails this test until it goes through `postWebhook`,
// `getJson` or `egressFetch`, or is added here with its reason. A listed site that is gone fails
// too, so the list never vouches for code that no longer exists.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { outboundCallSites } from "./egress-call-sites.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** `file#kind` → why the request need not (or does) go through the egress policy. */
const SANCTIONED: Readonly<Record<string, string>> = {
  // The egress itself.
  "packages/webhooks/src/egress/agent.ts#sender:undici":
    "the egress's own dispatcher, with the guarded connector",
  "packages/webhooks/src/egress/connector.ts#sender:undici":
    "the guarded connector: every socket's address judged",
  "packages/webhooks/src/egress/connector.ts#node-client":
    "the guarded connector opens the socket to a vetted address",
  "packages/webhooks/src/egress/fetch.ts#sender:undici":
    "egressFetch: undici's fetch over the egress dispatcher",
  // Through the egress, by construction.
  "packages/agreements/src/a2a/peer-discovery.ts#sender:@a2a-js/sdk/client":
    "the A2A client of a peer is given egressFetch (peerFetchOf) and cards are read with getJson",
  "packages/agreements/src/a2a/push-request-handler.ts#sender:@a2a-js/sdk/server":
    "the SDK's request handler is given EgressPushSender, whose POSTs are postWebhook",
  "packages/holder/src/oauth/provider.ts#sender:oidc-provider":
    "the authorization server's own HTTP client is refused by httpOptions: it fetches nothing",
  // Addresses the operator configured, not a client, peer or subscriber.
  "packages/agent/src/holder/client.ts#sender:@modelcontextprotocol/client":
    "the agent's MCP client reaches the holder URL its operator configured",
  "packages/forwarder/src/upstream.ts#sender:@modelcontextprotocol/client":
    "the forwarder reaches the upstream holder its operator configured",
  "packages/forwarder/src/upstream.ts#global-fetch":
    "the forwarder's requests to its configured upstream holder",
  "packages/mcp-endpoint/src/client-fetch.ts#global-fetch":
    "the default base of scopedSignalFetch, used for MCP clients of a configured holder (the agent's too)",
  "packages/holder/src/oauth/resource.ts#sender:jose":
    "the key set of the external issuer the operator configured (--oauth-issuer)",
  "packages/holder/src/oauth/resource.ts#global-fetch":
    "the metadata of the external issuer the operator configured (--oauth-issuer)",
  "packages/cli/src/commands/listen.ts#global-fetch":
    "doorbell listen --forward-to: a local URL the person running the command gave",
  "packages/holder/src/mail/smtp.ts#sender:nodemailer":
    "SMTP to the relay the operator configured (--smtp), not HTTP",
  "packages/agreements/src/inbox/smtp.ts#sender:nodemailer":
    "SMTP to the relay the agent's operator configured, not HTTP",
};

describe("every outbound request goes through the egress policy", () => {
  const sites = outboundCallSites(ROOT);
  const keys = new Set(sites.map((site) => `${site.file}#${site.kind}`));

  it("finds the call sites (the scan itself works)", () => {
    expect(keys).toContain("packages/webhooks/src/egress/fetch.ts#sender:undici");
    expect(keys).toContain("packages/cli/src/commands/listen.ts#global-fetch");
  });

  it("every call site is the egress, goes through it, or is listed with its reason", () => {
    const unsanctioned = sites
      .filter((site) => SANCTIONED[`${site.file}#${site.kind}`] === undefined)
      .map((site) => `${site.file}:${site.line} ${site.kind}`);
    expect(unsanctioned).toEqual([]);
  });

  it("every listed call site still exists", () => {
    expect(Object.keys(SANCTIONED).filter((key) => !keys.has(key))).toEqual([]);
  });
});

describe("the scan", () => {
  it("tells a call of the global fetch from a local, a method and a type", async () => {
    const { sitesOfText } = await import("./egress-call-sites.js");
    const kinds = (text: string) => sitesOfText("x.ts", text).map((site) => `${site.kind}:${site.line}`);
    expect(kinds("await fetch(url);")).toEqual(["global-fetch:1"]);
    expect(kinds("const f: typeof fetch = fetch;")).toEqual(["global-fetch:1"]);
    expect(
      kinds("const go = (fetch: F) => fetch(url);\napp.fetch(req);\ninterface H { fetch(r: Request): void }"),
    ).toEqual([]);
    expect(kinds('import http from "node:http";\nhttp.request(url);\nhttp.createServer();')).toEqual([
      "node-client:2",
    ]);
    expect(kinds('import { request } from "node:https";')).toEqual(["node-client:1"]);
    expect(kinds('import { DefaultPushNotificationSender } from "@a2a-js/sdk/server";')).toEqual([
      "sender:@a2a-js/sdk/server:1",
    ]);
    expect(
      kinds('import { AgentEvent } from "@a2a-js/sdk/server";\nimport type { Agent } from "undici";'),
    ).toEqual([]);
  });
});
