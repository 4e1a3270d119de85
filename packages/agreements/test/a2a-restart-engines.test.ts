// Durable state (issue 18): an agreement over A2A survives a restart of both agents, on SQLite and
// on PostgreSQL. The seller's quote waits for its owner; both agents stop (servers closed,
// databases closed) and start again from their databases; the owner approves; the buyer, new, reads
// the quote from the seller's task (kept in SQL) and accepts; both sides end agreed with a record
// that checks out.
import { TaskState } from "@a2a-js/sdk";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WAITING_FOR_OWNER } from "../src/a2a/task-states.js";
import { checkRecord } from "../src/check/check.js";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { type A2AAgent, rawClient, startA2AAgent, statusText } from "./a2a-agents.js";
import { ASK, acceptQuotes, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, buyer, resolveKey } = await twoParties();
const sellerLimits: LimitsPolicy = { version: "s-3", types: ["quote"], maxTotal: { EUR: "100000" } };
const buyerLimits: LimitsPolicy = {
  version: "b-7",
  types: ["ask_quote", "accept"],
  maxTotal: { EUR: "1000000" },
};
// 4 × 45,000 = 180,000 EUR: over the seller's limit, so the quote waits for its owner.
const overTheLimit: Responder = quoteDesks("45000", (now) => now + 3600);

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("an agreement waiting for the seller's owner survives a restart of both agents", async () => {
    const sellerDb = await engine.createDatabase();
    const buyerDb = await engine.createDatabase();
    const running: A2AAgent[] = [];
    try {
      const sellerSetup = { party: seller, policy: sellerLimits, respond: overTheLimit, resolveKey };
      const buyerSetup = { party: buyer, policy: buyerLimits, respond: acceptQuotes, resolveKey };
      let s = await startA2AAgent({ ...sellerSetup, database: await sellerDb.connect() });
      let b = await startA2AAgent({ ...buyerSetup, database: await buyerDb.connect() });
      running.push(s, b);
      const sent = await b.a2a.remote.start(ASK, seller.address, s.cardUrl);
      const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
      const taskId = (await b.store.taskBinding(buyer.address, thread))?.taskId ?? "";
      expect(taskId).not.toBe("");
      expect(statusText(b.a2a.remote.task(thread))).toBe(WAITING_FOR_OWNER);

      // Both stop; each starts again from its own database, the seller on the same port.
      const port = s.port;
      await s.close();
      await b.close();
      running.length = 0;
      s = await startA2AAgent({ ...sellerSetup, database: await sellerDb.connect(), port });
      b = await startA2AAgent({ ...buyerSetup, database: await buyerDb.connect() });
      running.push(s, b);
      // The task is still there for the other side to read, and so is what waits for the owner.
      const kept = await (await rawClient(s)).getTask({ tenant: "", id: taskId });
      expect(kept.contextId).toBe(thread);
      expect(kept.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const [pending] = await s.inbox.pending();
      expect(pending?.thread).toBe(thread);

      await s.inbox.approve(pending?.id ?? "");
      // The new buyer follows its task from the binding it kept, takes the quote and accepts it.
      await b.a2a.remote.poll();
      expect(b.a2a.remote.task(thread)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      for (const [agent, address] of [
        [s, seller.address],
        [b, buyer.address],
      ] as const) {
        expect(await agent.store.threadState(address, thread)).toEqual({ state: "agreed", channel: "a2a" });
        expect(await checkRecord(await agent.store.record(address, thread), { resolveKey })).toMatchObject({
          ok: true,
          result: "two_signatures",
        });
      }
      const done = await (await rawClient(s)).getTask({ tenant: "", id: taskId });
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(done.artifacts.map((a) => a.artifactId)).toEqual([`record-${thread}`]);
    } finally {
      await Promise.allSettled(running.map((agent) => agent.close()));
    }
  });
});
