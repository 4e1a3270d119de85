// Push profile §7 rule 6 without the agent, within rule 1, through a real holder that takes end
// requests: when the agent's side ends on its own (its endpoint answers 410, or delivery fails
// until its subscription ends), the forwarder sends the holder an end request signed with the
// secret of that subscription, and the holder's side ends at once: no new match, no doorbell to
// the relay, and the person's manage page stops saying it listens. Two forwarder processes share
// one database (one end request goes), and two holder processes share another. An end request that
// is forged, replayed (at either holder process), stale, malformed or too large is refused and
// ends nothing.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Holder } from "@doorbell/holder";
import { forEachEngine } from "@doorbell/store/testing";
import { createStandardSigner, generateSecret } from "@doorbell/webhooks";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryDb } from "../src/context.js";
import { holderSecrets } from "../src/relays.js";
import { type AgentEndpoint, startAgentEndpoint, startForwarder, until } from "./forwarder-harness.js";
import {
  connectAgent,
  holderSide,
  offerArrives,
  startHolder,
  subscribedAndApproved,
} from "./holder-behind-forwarder.js";

/** Delivery to the agent gives up after three quick attempts instead of 24 hours. */
const QUICK_RETRIES = { delaysMs: [50, 50], horizonMs: 1_000, jitter: 0, retryAfterCapMs: 100 };

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let dataDir: string;
  /** Two processes of one holder on one database; the forwarder's upstream is the first. */
  let holders: { holder: Holder; origin: string }[];
  /** Two processes of one forwarder on the suite's database; the agent talks to the first. */
  let forwarders: Awaited<ReturnType<typeof startForwarder>>[];
  let endpoint: AgentEndpoint;
  let agent: Client;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-forwarder-end-"));
    const database = (await engine.createDatabase()).url;
    holders = [await startHolder({ dataDir, database }), await startHolder({ dataDir, database })];
    const upstream = `${holders[0]?.origin}/mcp`;
    const options = { endingSweepMs: 100, engine: { challengeDelaysMs: [200, 200], retry: QUICK_RETRIES } };
    forwarders = [
      await startForwarder(engine, upstream, options),
      await startForwarder(engine, upstream, options),
    ];
    endpoint = await startAgentEndpoint();
    agent = await connectAgent(first(forwarders).mcpUrl);
  });
  afterAll(async () => {
    await agent?.close();
    for (const f of forwarders ?? []) await f.close();
    for (const h of holders ?? []) await h.holder.close();
    await endpoint?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function first<T>(list: readonly T[]): T {
    const [one] = list;
    if (one === undefined) throw new Error("not started");
    return one;
  }
  const holder = () => first(holders).holder;
  const forwarder = () => first(forwarders).forwarder;

  const relayOf = (id: string) =>
    forwarder()
      .context.store.db.selectFrom("forwarder_relays")
      .selectAll()
      .where("agent_subscription_id", "=", id)
      .executeTakeFirstOrThrow();

  const agentSide = (id: string) =>
    forwarder().context.engine.get(deliveryDb(forwarder().context.store.db), id);

  const subscribed = (email: string) =>
    subscribedAndApproved({ holder: holder(), agent, endpoint, relayOf }, email);

  /** The person's manage page, in English. */
  const managePage = async (managePath: string) =>
    (await fetch(`${first(holders).origin}${managePath}`, { headers: { "accept-language": "en" } })).text();

  it("the holder's descriptor says where end requests go", async () => {
    const descriptor = (await (
      await fetch(`${first(holders).origin}/.well-known/isto-intents.json`)
    ).json()) as { push?: { endUrl?: string } };
    expect(descriptor.push).toEqual({ endUrl: `${first(holders).origin}/push/end` });
  });

  it("when the agent's endpoint answers 410, the holder's side ends at once, with no doorbell to the relay, and the manage page stops saying it listens", async () => {
    const side = holderSide(holder());
    const statusBefore = endpoint.of("intent.status.changed").length;
    const s = await subscribed("end.one@example.sk");
    // Approval makes the intent's status news (push rule 3): that doorbell reaches the agent first.
    await until(() => endpoint.of("intent.status.changed").length > statusBefore, 20_000);
    expect(await managePage(s.managePath)).toContain("Still listening.");

    endpoint.control.status = 410;
    try {
      await offerArrives(holder());
      await until(async () => (await agentSide(s.subscriptionId)).status === "ended", 20_000);
      expect((await agentSide(s.subscriptionId)).endedReason).toBe("gone");
      // The holder's next match doorbell would wait out its 15-minute coalescing window: nothing
      // reaches the relay before the holder's side ends.
      await until(async () => (await side.subscription(s.holderId)).status === "ended", 20_000);
    } finally {
      endpoint.control.status = 0;
    }
    expect(await side.subscription(s.holderId)).toMatchObject({ status: "ended", ended_reason: "gone" });
    // One end request (of two forwarder processes, one sent it), and no doorbell answered 410.
    expect(await side.endRequests(s.holderId)).toBe(1);
    expect(await side.deadLetters(s.holderId)).toBe(0);
    // The forwarder records the holder's answer once it has it: nothing left to end there.
    await until(async () => (await relayOf(s.subscriptionId)).holder_subscription_id === null);
    expect(await relayOf(s.subscriptionId)).toMatchObject({
      status: "ended",
      ended_reason: "gone",
      holder_subscription_id: null,
      holder_end_due_at: null,
    });
    const page = await managePage(s.managePath);
    expect(page).not.toContain("Still listening.");
    expect(page).toContain("said it is gone");
  });

  it("when delivery to the agent fails until its subscription ends, the holder's side ends at once as delivery-failed", async () => {
    const side = holderSide(holder());
    const statusBefore = endpoint.of("intent.status.changed").length;
    const s = await subscribed("end.two@example.sk");
    await until(() => endpoint.of("intent.status.changed").length > statusBefore, 20_000);
    expect(await managePage(s.managePath)).toContain("Still listening.");

    endpoint.control.status = 503;
    try {
      await offerArrives(holder());
      await until(async () => (await agentSide(s.subscriptionId)).status === "ended", 20_000);
      expect((await agentSide(s.subscriptionId)).endedReason).toBe("delivery-failed");
      await until(async () => (await side.subscription(s.holderId)).status === "ended", 20_000);
    } finally {
      endpoint.control.status = 0;
    }
    expect(await side.subscription(s.holderId)).toMatchObject({
      status: "ended",
      ended_reason: "delivery-failed",
    });
    expect(await side.endRequests(s.holderId)).toBe(1);
    expect(await side.deadLetters(s.holderId)).toBe(0);
    const page = await managePage(s.managePath);
    expect(page).not.toContain("Still listening.");
    expect(page).toContain("stopped answering");
  });

  it("an end request that is forged, replayed, stale, malformed or too large is refused and ends nothing", async () => {
    const side = holderSide(holder());
    const s = await subscribed("end.three@example.sk");
    const other = await subscribed("end.four@example.sk");
    const secretOf = async (id: string) => holderSecrets(forwarder().context, await relayOf(id))[0] as string;
    const secret = await secretOf(s.subscriptionId);
    const otherSecret = await secretOf(other.subscriptionId);
    const now = Math.floor(Date.now() / 1000);

    const body = (fields: Record<string, unknown>) =>
      JSON.stringify({
        type: "subscription.end",
        subscriptionId: s.holderId,
        reason: "unsubscribed",
        ...fields,
      });
    const signed = (
      text: string,
      options: { secret?: string; timestamp?: number } = {},
    ): { headers: Record<string, string>; body: Buffer } => {
      const bytes = Buffer.from(text, "utf8");
      const headers = createStandardSigner({ secrets: [options.secret ?? secret] }).headers({
        id: `msg_${randomBytes(12).toString("hex")}`,
        timestamp: options.timestamp ?? now,
        body: bytes,
      });
      return { headers: { ...headers, "content-type": "application/json" }, body: bytes };
    };
    const post = (
      request: { headers: Record<string, string>; body: Buffer },
      origin = first(holders).origin,
    ) =>
      fetch(`${origin}/push/end`, {
        method: "POST",
        headers: request.headers,
        body: new Uint8Array(request.body),
      });

    const forged: [string, { headers: Record<string, string>; body: Buffer }, number, string][] = [
      [
        "a secret that is not the subscription's",
        signed(body({}), { secret: generateSecret() }),
        401,
        "UNVERIFIED",
      ],
      ["another subscription's secret", signed(body({}), { secret: otherSecret }), 401, "UNVERIFIED"],
      ["an unknown subscription", signed(body({ subscriptionId: "sub_unknown" })), 401, "UNVERIFIED"],
      ["a stale timestamp", signed(body({}), { timestamp: now - 600 }), 401, "UNVERIFIED"],
      ["a timestamp from the future", signed(body({}), { timestamp: now + 600 }), 401, "UNVERIFIED"],
      [
        "no signature",
        { headers: { "content-type": "application/json" }, body: Buffer.from(body({})) },
        400,
        "INVALID",
      ],
      ["a body that is not JSON", signed("subscription.end please"), 400, "INVALID"],
      ["another type", signed(body({ type: "subscription.ended" })), 400, "INVALID"],
      ["a reason of its own", signed(body({ reason: "bored" })), 400, "INVALID"],
      ["a field more", signed(body({ intentCode: "ic_x" })), 400, "INVALID"],
      ["a body over 1 KB", signed(body({ reason: "gone".repeat(300) })), 413, "TOO_LARGE"],
    ];
    for (const [what, request, status, code] of forged) {
      const answer = await post(request);
      expect({ what, status: answer.status }).toEqual({ what, status });
      expect(((await answer.json()) as { error: string }).error).toBe(`ERR_PUSH_END_${code}`);
    }
    const got = await fetch(`${first(holders).origin}/push/end`);
    expect([got.status, got.headers.get("allow")]).toEqual([405, "POST"]);
    expect(await side.subscription(s.holderId)).toMatchObject({ status: "active" });
    expect(await side.endRequests(s.holderId)).toBe(0);
    expect(await managePage(s.managePath)).toContain("Still listening.");

    // The real one ends it; the same bytes again change nothing, at either holder process.
    const valid = signed(body({}));
    const done = await post(valid);
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({
      subscriptionId: s.holderId,
      status: "ended",
      endedReason: "unsubscribed",
    });
    for (const h of holders) {
      const replayed = await post(valid, h.origin);
      expect(replayed.status).toBe(409);
      expect(((await replayed.json()) as { error: string }).error).toBe("ERR_PUSH_END_REPLAYED");
    }
    expect(await side.endRequests(s.holderId)).toBe(1);
    // A new request for it (a retry after a lost answer) is answered as done, its reason kept.
    const retried = await post(signed(body({ reason: "gone" })));
    expect(await retried.json()).toEqual({
      subscriptionId: s.holderId,
      status: "ended",
      endedReason: "unsubscribed",
    });
    expect(await side.subscription(s.holderId)).toMatchObject({
      status: "ended",
      ended_reason: "unsubscribed",
    });
    expect(await side.subscription(other.holderId)).toMatchObject({ status: "active" });
  });
});
