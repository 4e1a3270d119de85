// Durable state (issue 18): an agreement over A2A survives a restart of both agents, on SQLite and
// on PostgreSQL. The seller's quote waits for its owner; both agents stop (servers closed,
// databases closed) and start again from their databases; the owner approves; the buyer, new, reads
// the quote from the seller's task (kept in SQL) and accepts; both sides end agreed with a record
// that checks out.
import { type Task, TaskState } from "@a2a-js/sdk";
import { ServerCallContext } from "@a2a-js/sdk/server";
import { migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqlTaskStore } from "../src/a2a/sql-task-store.js";
import { WAITING_FOR_OWNER } from "../src/a2a/task-states.js";
import { checkRecord } from "../src/check/check.js";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { agreementsInboxMigrations } from "../src/schema.js";
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

const task = (id: string, contextId: string, state: TaskState, at: string): Task => ({
  id,
  contextId,
  status: { state, message: undefined, timestamp: at },
  artifacts: [
    {
      artifactId: `record-${contextId}`,
      name: "",
      description: "",
      parts: [],
      metadata: undefined,
      extensions: [],
    },
  ],
  history: [],
  metadata: undefined,
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("the SQL task store saves, loads, lists by thread and state, pages, and keeps tenants apart", async () => {
    const { db } = await engine.createDatabase();
    await migrate(db, [agreementsInboxMigrations]);
    const store = createSqlTaskStore(db);
    const here = new ServerCallContext();
    const other = new ServerCallContext({ tenant: "other" });
    await store.save(task("t-1", "thread-a", TaskState.TASK_STATE_WORKING, "2026-01-01T00:00:01Z"), here);
    await store.save(task("t-2", "thread-b", TaskState.TASK_STATE_COMPLETED, "2026-01-01T00:00:02Z"), here);
    await store.save(task("t-3", "thread-c", TaskState.TASK_STATE_WORKING, "2026-01-01T00:00:03Z"), here);
    // Saving again overwrites.
    await store.save(
      task("t-1", "thread-a", TaskState.TASK_STATE_INPUT_REQUIRED, "2026-01-01T00:00:04Z"),
      here,
    );
    expect((await store.load("t-1", here))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(await store.load("t-1", other)).toBeUndefined();
    const base = {
      tenant: "",
      contextId: "",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    };
    const all = await store.list({ ...base, pageSize: 2 }, here);
    expect(all.tasks.map((t) => t.id)).toEqual(["t-1", "t-3"]);
    expect(all.totalSize).toBe(3);
    expect(all.tasks[0]?.artifacts).toEqual([]);
    const rest = await store.list({ ...base, pageSize: 2, pageToken: all.nextPageToken }, here);
    expect(rest.tasks.map((t) => t.id)).toEqual(["t-2"]);
    expect(rest.nextPageToken).toBe("");
    const working = await store.list(
      { ...base, status: TaskState.TASK_STATE_WORKING, includeArtifacts: true },
      here,
    );
    expect(working.tasks.map((t) => t.id)).toEqual(["t-3"]);
    expect(working.tasks[0]?.artifacts).toHaveLength(1);
    expect((await store.list({ ...base, contextId: "thread-b" }, here)).tasks.map((t) => t.id)).toEqual([
      "t-2",
    ]);
    expect((await store.list(base, other)).tasks).toEqual([]);
  });

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
