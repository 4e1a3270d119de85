// Issue 16 item 4, a bounded memory per session: a 2025-11-25 session remembers at most
// SESSION_SUBSCRIPTIONS_MAX of the subscriptions it made (what it may read and watch as
// resources, push §8.3), the oldest forgotten first. Without the bound, a session that subscribes
// and unsubscribes again and again grows without end.
import { forEachEngine } from "@doorbell/store/testing";
import { generateSecret } from "@doorbell/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_SUBSCRIPTIONS_MAX } from "../../src/mcp/subscription-resource.js";
import { basicPublish, ok, type Published, startHolder, type TestHolder } from "../support/mcp-harness.js";
import { type AgentEndpoint, startAgentEndpoint } from "../support/push-endpoint.js";

interface PushAnswer {
  subscriptionId: string;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let endpoint: AgentEndpoint;

  beforeAll(async () => {
    h = await startHolder(engine, { push: true });
    endpoint = await startAgentEndpoint(h.clock.now);
  });
  afterAll(async () => {
    await h?.close();
    await endpoint?.close();
  });

  it("remembers at most SESSION_SUBSCRIPTIONS_MAX subscriptions per session, the newest", async () => {
    const session = await h.connectLegacy("many-subscriptions");
    const draft = await ok<Published>(session, "intent_publish_intent", basicPublish());
    const ids: string[] = [];
    for (let i = 0; i < SESSION_SUBSCRIPTIONS_MAX + 5; i++) {
      const { subscriptionId } = await ok<PushAnswer>(session, "intent_subscribe_events", {
        intentCode: draft.intentCode,
        delivery: { url: `${endpoint.url}/n${i}`, secret: generateSecret() },
      });
      ids.push(subscriptionId);
      // At most three live subscriptions per intent: end each, so the next one is allowed.
      await ok(session, "intent_unsubscribe_events", { intentCode: draft.intentCode, subscriptionId });
    }
    const listed = (await session.listResources()).resources.map((resource) => resource.uri);
    expect(listed).toHaveLength(SESSION_SUBSCRIPTIONS_MAX);
    const uri = (id: string) => `isto-intents://subscription/${id}`;
    expect(listed).toEqual(ids.slice(-SESSION_SUBSCRIPTIONS_MAX).map(uri));
    // The forgotten one is no longer this session's to read; the newest still is.
    await expect(session.readResource({ uri: uri(ids[0] as string) })).rejects.toThrow(
      /no subscription resource/,
    );
    const newest = await session.readResource({ uri: uri(ids.at(-1) as string) });
    expect(JSON.parse((newest.contents[0] as { text: string }).text)).toMatchObject({
      subscriptionId: ids.at(-1),
      status: "ended",
    });
  }, 120_000);
});
