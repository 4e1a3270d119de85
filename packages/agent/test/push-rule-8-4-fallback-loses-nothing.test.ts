// Push profile §8.4 with a real holder: a doorbell makes the agent read with since at once; after
// subscription.ended, or a gap it notices (a read finds matches no doorbell announced), it reads
// every 15 minutes instead — and every match reaches the app exactly once, in order.
import { generateSecret } from "@doorbell/webhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryStateStore } from "../src/index.js";
import { type AgentRun, runAgent, subscribedState } from "./agent-fixture.js";
import { HOUR, MINUTE, type RunningHolder, startHolder } from "./holder-fixture.js";

let h: RunningHolder;
// A holder per test: every new intent would match the offers earlier tests added.
beforeEach(async () => {
  h = await startHolder();
});
afterEach(async () => {
  await h?.close();
});

async function subscribedAgent(): Promise<{ run: AgentRun; intentCode: string }> {
  const { intentCode } = await h.activeIntent();
  const secret = generateSecret();
  const run = await runAgent(h, {
    store: createMemoryStateStore(subscribedState(intentCode, secret)),
    secret,
  });
  await run.agent.watch(intentCode);
  return { run, intentCode };
}

const titles = (run: AgentRun) => run.matches.map((match) => match.offer.id);

describe("push rule 8.4: doorbells first, reading as the fallback, nothing lost", () => {
  it("reads at once when a doorbell rings, and every 15 minutes after subscription.ended", async () => {
    const { run } = await subscribedAgent();
    expect(run.matches).toEqual([]);

    h.clock.advance(MINUTE);
    await h.addOffers(2);
    const rang = await run.ring("intent.matches.delivered", {
      newMatches: 2,
      latestDeliveredAt: new Date(h.clock.now()).toISOString(),
    });
    expect(rang.status).toBe(200);
    // One minute after the last read: allowed because the doorbell granted it.
    await run.agent.runDue();
    expect(run.matches).toHaveLength(2);

    await run.ring("subscription.ended", { reason: "delivery-failed" });
    expect(run.reports.at(-1)).toMatchObject({
      status: "ended",
      endedReason: "delivery-failed",
      mode: "polling",
    });
    expect(run.reports.at(-1)?.note).toMatch(
      /doorbells ended \(delivery-failed\); reading matches every 15 minutes/,
    );

    h.clock.advance(5 * MINUTE);
    await h.addOffers(1);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(2);
    h.clock.advance(10 * MINUTE);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(3);
    expect(new Set(titles(run)).size).toBe(3);
    await run.close();
  });

  it("notices a missed doorbell, falls back to reading, and trusts doorbells again after the next one", async () => {
    const { run } = await subscribedAgent();
    h.clock.advance(MINUTE);
    await h.addOffers(1);
    // No doorbell for it. Doorbell mode reads only every 6 hours as a check.
    h.clock.advance(HOUR);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(0);
    h.clock.advance(5 * HOUR);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(1);
    await run.settle();
    expect(run.reports.at(-1)).toMatchObject({ status: "active", mode: "polling" });
    expect(run.reports.at(-1)?.note).toMatch(/a doorbell was missed/);

    await h.addOffers(1);
    h.clock.advance(15 * MINUTE);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(2);

    await run.ring("intent.status.changed", { status: "active" });
    expect(run.reports.at(-1)).toMatchObject({ status: "active", mode: "doorbell" });
    await run.close();
  });

  it("hands matches recorded in the same millisecond as the cursor over once (since is 1 ms earlier, then de-duplicated)", async () => {
    const { run } = await subscribedAgent();
    h.clock.advance(MINUTE);
    await h.addOffers(2);
    await run.ring("intent.matches.delivered", {
      newMatches: 2,
      latestDeliveredAt: new Date(h.clock.now()).toISOString(),
    });
    await run.agent.runDue();
    expect(run.matches).toHaveLength(2);
    // The holder's clock has not moved: this match has the very same deliveredAt as the cursor.
    await h.addOffers(1);
    await run.ring("intent.matches.delivered", {
      newMatches: 1,
      latestDeliveredAt: new Date(h.clock.now()).toISOString(),
    });
    await run.agent.runDue();
    expect(run.matches).toHaveLength(3);
    expect(new Set(titles(run)).size).toBe(3);
    await run.close();
  });

  it("hands matches over again when the app's onMatches failed (at least once), and moves on after", async () => {
    const { intentCode } = await h.activeIntent();
    let fail = true;
    const run = await runAgent(h, {
      onMatches: () => {
        if (fail) throw new Error("the app is down");
      },
    });
    h.clock.advance(MINUTE);
    await h.addOffers(1);
    await run.agent.watch(intentCode);
    expect(run.matches).toHaveLength(0);
    expect(run.errors.at(-1)).toMatchObject({ code: "ERR_AGENT_HANDLER_FAILED" });
    fail = false;
    h.clock.advance(15 * MINUTE);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(1);
    h.clock.advance(15 * MINUTE);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(1);
    await run.close();
  });

  it("without an endpoint reads every 15 minutes and reports the intent's status", async () => {
    const { intentCode } = await h.activeIntent();
    const run = await runAgent(h);
    const handle = await run.agent.watch(intentCode);
    expect(run.statuses).toEqual(["active"]);
    expect(run.agent.report(handle.handle)).toMatchObject({ status: "none", mode: "polling" });
    await h.addOffers(1);
    h.clock.advance(14 * MINUTE);
    expect(await run.agent.runDue()).toBe(h.clock.now() + MINUTE);
    expect(run.matches).toHaveLength(0);
    h.clock.advance(MINUTE);
    await run.agent.runDue();
    expect(run.matches).toHaveLength(1);
    await run.close();
  });
});
