import { migrate, openDatabase } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentInbox } from "../src/inbox/agent-inbox.js";
import { InboxError } from "../src/inbox/errors.js";
import { type ExpiryTimers, startInboxExpiry } from "../src/inbox/expiry.js";
import { createSqlInboxStore, type InboxStore } from "../src/inbox/store.js";
import { agreementsInboxMigrations } from "../src/schema.js";
import { makeParty, resolverFor } from "./inbox-parties.js";

/** A timer the test fires by hand: no sleeping. */
function manualTimers() {
  const timer: { fire?: () => void; ms?: number } = {};
  const timers: ExpiryTimers = {
    setInterval: (fn, ms) => {
      timer.fire = fn;
      timer.ms = ms;
      return 1;
    },
    clearInterval: () => {
      timer.fire = undefined;
    },
  };
  return { timers, timer };
}

async function fill(store: InboxStore, inbox: string): Promise<void> {
  await store.saveMessage({
    inbox,
    id: "m-1",
    thread: "t-1",
    direction: "in",
    type: "ask_quote",
    hash: "h",
    canonical: "{}",
    jws: null,
    result: "signed_and_checked",
    at: 1,
  });
  await store.setThreadState(inbox, "t-1", "working", "email", 1);
  await store.receiverState(inbox).claimNonce("x@b.example", "n-1", 2_000_000_000);
  await store.addPending({
    inbox,
    id: "p-1",
    thread: "t-1",
    channel: "email",
    draft: {},
    reasons: [],
    createdAt: 1,
  });
  await store.saveRecord(inbox, "t-1", { kept: true });
  await store.bindTask({ inbox, thread: "t-1", role: "server", taskId: "task-1", endpoint: null });
}

async function keptNothing(store: InboxStore, inbox: string): Promise<void> {
  expect(await store.getInbox(inbox)).toBeUndefined();
  expect(await store.thread(inbox, "t-1")).toEqual([]);
  expect(await store.threadState(inbox, "t-1")).toBeUndefined();
  expect(await store.pending(inbox)).toEqual([]);
  expect(await store.record(inbox, "t-1")).toBeUndefined();
  expect(await store.taskBinding(inbox, "t-1")).toBeUndefined();
  // The nonce row went too: the same nonce claims again.
  expect(await store.receiverState(inbox).claimNonce("x@b.example", "n-1", 2_000_000_000)).toBe(true);
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let store: InboxStore;
  beforeAll(async () => {
    await migrate(engine.db, [agreementsInboxMigrations]);
    store = createSqlInboxStore(engine.db);
  });

  it("an expired inbox deletes itself and its threads on the timer's next sweep, and no earlier", async () => {
    let now = 1_000_000;
    const policy = { version: "v1" };
    await store.createInbox({ address: "job@a.example", policy, expiresAt: 1_060_000, createdAt: now });
    await store.createInbox({ address: "kept@a.example", policy, expiresAt: null, createdAt: now });
    await fill(store, "job@a.example");
    await fill(store, "kept@a.example");
    const { timers, timer } = manualTimers();
    const deleted: string[][] = [];
    const expiry = startInboxExpiry({
      store,
      clock: () => now,
      intervalMs: 30_000,
      timers,
      onDeleted: (addresses) => deleted.push([...addresses]),
    });
    expect(timer.ms).toBe(30_000);

    timer.fire?.();
    expect(await expiry.runOnce()).toEqual([]); // joins the sweep the timer started: nothing is due
    expect(await store.getInbox("job@a.example")).toBeDefined();

    now = 1_060_000;
    timer.fire?.();
    await expiry.runOnce();
    expect(deleted).toEqual([["job@a.example"]]);
    await keptNothing(store, "job@a.example");
    expect(await store.thread("kept@a.example", "t-1")).toHaveLength(1);
    expect(await store.getInbox("kept@a.example")).toBeDefined();

    expiry.stop();
    expect(timer.fire).toBeUndefined();
  });
});

describe("an agent inbox whose time is up", () => {
  it("refuses to start a thread: it no longer exists", async () => {
    const handle = await openDatabase({ url: ":memory:" });
    try {
      await migrate(handle, [agreementsInboxMigrations]);
      const store = createSqlInboxStore(handle);
      const party = await makeParty("shortlived", "pty_shortlived0000000001");
      let now = 1_000_000;
      await store.createInbox({
        address: party.address,
        policy: { version: "v1" },
        expiresAt: 1_001_000,
        createdAt: now,
      });
      const inbox = new AgentInbox({
        address: party.address,
        actingFor: { org_name: party.org, contact: `owner@${party.domain}` },
        agent: { name: "agent", kind: "api" },
        store,
        signingKey: party.key,
        jku: party.jku,
        resolveKey: await resolverFor(party),
        respond: async () => undefined,
        clock: () => now,
      });
      now = 1_001_000;
      expect(
        await startInboxExpiry({ store, clock: () => now, timers: manualTimers().timers }).runOnce(),
      ).toEqual([party.address]);
      const error = await inbox
        .start({ type: "ask_quote", items: [{ description: "Desk", quantity: 1 }] }, "x@b.example")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxError);
      expect(error).toMatchObject({ code: "ERR_INBOX_UNKNOWN" });
    } finally {
      await handle.close();
    }
  });
});
