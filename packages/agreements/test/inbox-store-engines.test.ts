import { migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqlInboxStore, type InboxStore, type StoredMessage } from "../src/inbox/store.js";
import { agreementsInboxMigrations } from "../src/schema.js";

const message = (inbox: string, id: string, at: number, thread = "t-1"): StoredMessage => ({
  inbox,
  id,
  thread,
  direction: "in",
  type: "quote",
  hash: `hash-${id}`,
  canonical: `{"id":"${id}"}`,
  jws: null,
  result: "signed_and_checked",
  at,
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let store: InboxStore;
  beforeAll(async () => {
    await migrate(engine.db, [agreementsInboxMigrations]);
    store = createSqlInboxStore(engine.db);
  });

  it("an inbox keeps its limits and expiry, found by any case of its address", async () => {
    const policy = { version: "v1", types: ["quote" as const], maxTotal: { EUR: "100" } };
    await store.createInbox({ address: "Agent@Shop.example", policy, expiresAt: 5_000, createdAt: 1_000 });
    expect(await store.getInbox("agent@shop.EXAMPLE")).toEqual({
      address: "agent@shop.example",
      policy,
      expiresAt: 5_000,
      createdAt: 1_000,
    });
  });

  it("a sender's nonce is claimed once per inbox (replay), and only by that sender", async () => {
    const state = store.receiverState("nonces@a.example");
    expect(await state.claimNonce("x@b.example", "n-1", 2_000_000_000)).toBe(true);
    expect(await state.claimNonce("x@b.example", "n-1", 2_000_000_000)).toBe(false);
    expect(await state.claimNonce("y@b.example", "n-1", 2_000_000_000)).toBe(true);
    expect(await store.receiverState("other@a.example").claimNonce("x@b.example", "n-1", 2_000_000_000)).toBe(
      true,
    );
  });

  it("a thread's messages come back in the order they were kept, each kept once, and prev reads their hash", async () => {
    const inbox = "thread@a.example";
    await store.saveMessage(message(inbox, "m-2", 20));
    await store.saveMessage(message(inbox, "m-1", 10));
    await store.saveMessage({ ...message(inbox, "m-1", 30), hash: "another" });
    expect((await store.thread(inbox, "t-1")).map((m) => [m.id, m.at, m.hash])).toEqual([
      ["m-1", 10, "hash-m-1"],
      ["m-2", 20, "hash-m-2"],
    ]);
    expect(await store.receiverState(inbox).messageHash("m-2")).toBe("hash-m-2");
    expect(await store.receiverState("elsewhere@a.example").messageHash("m-2")).toBeUndefined();
  });

  it("a thread keeps the channel it started on while its state moves", async () => {
    const inbox = "channel@a.example";
    await store.setThreadState(inbox, "t-1", "working", "a2a", 1);
    await store.setThreadState(inbox, "t-1", "input_required", "email", 2);
    expect(await store.threadState(inbox, "t-1")).toEqual({ state: "input_required", channel: "a2a" });
  });

  it("what waits for the owner is taken once", async () => {
    const inbox = "pending@a.example";
    const pending = {
      inbox,
      id: "p-1",
      thread: "t-1",
      channel: "a2a" as const,
      draft: { type: "quote", total: { amount: "600000", currency: "EUR" } },
      reasons: ["over the limit"],
      createdAt: 7,
    };
    await store.addPending(pending);
    expect(await store.pending(inbox)).toEqual([pending]);
    const [first, second] = await Promise.all([
      store.takePending(inbox, "p-1"),
      store.takePending(inbox, "p-1"),
    ]);
    expect([first, second].filter((p) => p !== undefined)).toEqual([pending]);
    expect(await store.pending(inbox)).toEqual([]);
  });

  it("a record is kept per thread, and a task binding gets its task id once the other side answers", async () => {
    const inbox = "bindings@a.example";
    await store.saveRecord(inbox, "t-1", { profile: "agent-agreement/1", n: 1 });
    await store.saveRecord(inbox, "t-1", { profile: "agent-agreement/1", n: 2 });
    expect(await store.record(inbox, "t-1")).toEqual({ profile: "agent-agreement/1", n: 2 });
    const client = {
      inbox,
      thread: "t-1",
      role: "client" as const,
      taskId: "",
      endpoint: "http://b.example/card",
    };
    await store.bindTask(client);
    await store.bindTask({ ...client, taskId: "task-9" });
    await store.bindTask({ inbox, thread: "t-2", role: "server", taskId: "task-3", endpoint: null });
    expect(await store.taskBinding(inbox, "t-1")).toEqual({ ...client, taskId: "task-9" });
    expect(await store.clientTasks(inbox)).toEqual([{ ...client, taskId: "task-9" }]);
  });
});
