// Issue 15: a callback is verified before the first delivery by its challenge, or by the
// receiver's `/.well-known/mcp-webhook-receiver.json` listing its path.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleApp, listenExample } from "../../../examples/events-check-function/server.js";
import { type Json, modernRequest, QUICK_RETRY, serveFetch, until } from "./interop-harness.js";

const AUTH = { authorization: "Bearer dev-token" };
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

/** A receiver that never answers a challenge, publishes which paths it serves, and verifies deliveries. */
async function documentedReceiver(secret: string) {
  const received: Json[] = [];
  let challenges = 0;
  const hooks = await serveFetch(async (request) => {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/.well-known/mcp-webhook-receiver.json")
      return Response.json({ receivers: ["/hooks/"] });
    const text = await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    new Webhook(secret).verify(text, headers);
    const body = JSON.parse(text) as Json;
    if (body.type === "verification") {
      challenges += 1;
      return new Response(null, { status: 503 });
    }
    received.push(body);
    return new Response(null, { status: 204 });
  });
  open.push(hooks.close);
  return { received, url: hooks.url, challenges: () => challenges };
}

describe("the well-known receiver document", () => {
  it("verifies a callback under a listed path without a challenge; an unlisted path still needs one", async () => {
    const app = await createExampleApp({
      allowLoopbackWebhooks: true,
      tuning: { pushIntervalMs: 60_000, webhook: { retry: QUICK_RETRY, verifyTimeoutMs: 3_000 } },
    });
    const { url, server } = await listenExample(app);
    open.push(async () => {
      server.closeAllConnections();
      server.close();
      await app.close();
    });
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const hooks = await documentedReceiver(secret);
    const subscribe = (id: number, path: string) =>
      modernRequest(
        url,
        id,
        "events/subscribe",
        {
          name: "order.placed",
          arguments: {},
          delivery: { mode: "webhook", url: `${hooks.url}${path}`, secret },
        },
        AUTH,
      );

    const listed = await subscribe(1, "/hooks/agent-1");
    expect(listed.message.error).toBeUndefined();
    app.book.place("ada", "mug");
    app.events.wake("order.placed");
    await until(() => hooks.received.length === 1);
    expect(hooks.received[0]).toMatchObject({ eventId: "order_1" });
    expect(hooks.challenges()).toBe(0);

    const unlisted = await subscribe(2, "/elsewhere");
    expect(unlisted.message.error).toMatchObject({ code: -32015, data: { reason: "challenge_failed" } });
    expect(hooks.challenges()).toBeGreaterThan(0);
  }, 30_000);
});
