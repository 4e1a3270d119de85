// Push profile §8.3 on the 2026-07-28 era, over real HTTP: `subscriptions/listen` naming a
// subscription resource that is malformed, another resource altogether, or (the push
// service says so) a subscription that does not exist is refused the way resources/read and
// resources/subscribe refuse it — -32602 with data.uri — instead of being acknowledged and then
// never hearing anything. A listen for a real subscription is still acknowledged, also through
// the MCP Events listen wrapper.
import { createEventsServer, type EventsServer, withEventsListen } from "@doorbell/mcp-events";
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeIntent, modernPost, ok, startHolder, type TestHolder } from "../support/mcp-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

interface PushAnswer {
  subscriptionId: string;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let events: EventsServer;
  let endpoint: AgentEndpoint;
  let uri: string;

  beforeAll(async () => {
    events = await createEventsServer();
    h = await startHolder(engine, {
      push: true,
      mcp: {
        events: {
          attach: (server, options) => events.attach(server, options),
          listen: (handler) => withEventsListen(handler, events),
        },
      },
    });
    endpoint = await startAgentEndpoint(h.clock.now);
    const agent = await h.connect("listener");
    const published = await activeIntent(h, agent, "listener@example.sk");
    const live = await ok<PushAnswer>(agent, "intent_subscribe_events", {
      intentCode: published.intentCode,
      delivery: { url: `${endpoint.url}/listened`, secret: generateSecret() },
    });
    uri = `isto-intents://subscription/${live.subscriptionId}`;
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
    await events.close();
  });

  /** One listen: its HTTP status, content type and first JSON-RPC message (the ack or the error). */
  async function listen(notifications: Record<string, unknown>, id = "listen-1") {
    const controller = new AbortController();
    const response = await fetch(h.mcpUrl, {
      ...modernPost("subscriptions/listen", { notifications }, { id }),
      signal: controller.signal,
    });
    const type = response.headers.get("content-type") ?? "";
    try {
      if (!type.includes("text/event-stream"))
        return { status: response.status, type, first: await response.json() };
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let seen = "";
      while (!seen.includes("\n\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      const data = seen
        .split("\n")
        .find((line) => line.startsWith("data: "))
        ?.slice(6);
      return { status: response.status, type, first: JSON.parse(data ?? "null") };
    } finally {
      controller.abort();
    }
  }

  it("a malformed subscription URI is -32602 with data.uri, not acknowledged", async () => {
    const bad = "isto-intents://subscription/not-an-id";
    const { status, first } = await listen({ resourceSubscriptions: [bad] });
    expect(status).toBe(200);
    expect(first).toMatchObject({
      jsonrpc: "2.0",
      id: "listen-1",
      error: { code: -32602, data: { uri: bad } },
    });
    expect(first.error.message).toMatch(/no subscription resource/);
  });

  it.each([
    ["another resource of the scheme", "isto-intents://intent/int_0123456789abcdef"],
    ["another scheme", "file:///etc/passwd"],
  ])("%s is refused the same way", async (_what, foreign) => {
    const { first } = await listen({ resourceSubscriptions: [foreign] });
    expect(first.error).toMatchObject({ code: -32602, data: { uri: foreign } });
  });

  it("a well-formed id no subscription has is refused", async () => {
    const unknown = "isto-intents://subscription/sub_0000000000000000nope";
    const { first } = await listen({ resourceSubscriptions: [unknown] });
    expect(first.error).toMatchObject({ code: -32602, data: { uri: unknown } });
  });

  it("one unknown URI among known ones refuses the listen, naming it", async () => {
    const unknown = "isto-intents://subscription/sub_1111111111111111nope";
    const { first } = await listen({ resourceSubscriptions: [uri, unknown], toolsListChanged: true });
    expect(first.error).toMatchObject({ code: -32602, data: { uri: unknown } });
  });

  it("with eventsListChanged too, the refusal comes through the events wrapper", async () => {
    const bad = "isto-intents://subscription/x";
    const { first } = await listen({ resourceSubscriptions: [bad], eventsListChanged: true });
    expect(first.error).toMatchObject({ code: -32602, data: { uri: bad } });
  });

  it("a real subscription's URI is acknowledged, with and without eventsListChanged", async () => {
    const plain = await listen({ resourceSubscriptions: [uri] }, "listen-ok");
    expect(plain.type).toContain("text/event-stream");
    expect(plain.first).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { resourceSubscriptions: [uri] } },
    });
    const both = await listen({ resourceSubscriptions: [uri], eventsListChanged: true }, "listen-both");
    expect(both.first).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { resourceSubscriptions: [uri], eventsListChanged: true } },
    });
  });
});
