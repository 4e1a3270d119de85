// Push profile §6 rule 4 at the agent: a doorbell outside ±300 s or with a signature that does not
// verify is refused; a webhook-id is processed once within 10 minutes — also across a restart,
// because processed ids are kept in the state file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSecret } from "@doorbell/webhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStateStore, createMemoryStateStore } from "../src/index.js";
import { doorbell, newWebhookId, ring } from "./doorbell-sender.js";
import {
  type ServedListener,
  SUBSCRIPTION_ID,
  serveStateListener,
  stateWithSubscription,
} from "./listener-fixture.js";

const statusChanged = () =>
  doorbell("intent.status.changed", { subscriptionId: SUBSCRIPTION_ID, status: "active" });
const now = () => Math.floor(Date.now() / 1000);

let open: ServedListener[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.allSettled(open.map((served) => served.close()));
  open = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function served(store = createMemoryStateStore(stateWithSubscription()), clock?: () => number) {
  const listener = await serveStateListener(store, clock);
  open.push(listener);
  return listener;
}

describe("push rule 4 at the agent: timestamp, signature, webhook-id", () => {
  it("processes a fresh, signed doorbell once and answers its replay as a duplicate", async () => {
    const l = await served();
    const id = newWebhookId();
    const body = statusChanged();
    expect(await ring(l.url, { secrets: [l.secret], body, id })).toMatchObject({
      status: 200,
      json: { status: "processed" },
    });
    expect(await ring(l.url, { secrets: [l.secret], body, id })).toMatchObject({
      status: 200,
      json: { status: "duplicate" },
    });
    expect(l.received).toHaveLength(1);
  });

  it.each([
    ["301 s old", -301, "ERR_WEBHOOK_TIMESTAMP_TOO_OLD"],
    ["301 s ahead", 301, "ERR_WEBHOOK_TIMESTAMP_TOO_NEW"],
  ])("refuses a doorbell %s with 401", async (_name, skew, code) => {
    // The receiver's clock held at a whole second, so no second passes between signing and checking.
    const at = now();
    const l = await served(undefined, () => at * 1000);
    const answer = await ring(l.url, { secrets: [l.secret], body: statusChanged(), timestamp: at + skew });
    expect(answer).toMatchObject({ status: 401, json: { error: code } });
    expect(l.received).toHaveLength(0);
  });

  it("accepts a doorbell 299 s old (inside the window)", async () => {
    const at = now();
    const l = await served(undefined, () => at * 1000);
    const answer = await ring(l.url, { secrets: [l.secret], body: statusChanged(), timestamp: at - 299 });
    expect(answer.status).toBe(200);
  });

  it("refuses a doorbell signed with another secret, and one whose body changed after signing", async () => {
    const l = await served();
    const wrong = await ring(l.url, { secrets: [generateSecret()], body: statusChanged() });
    expect(wrong).toMatchObject({ status: 401, json: { error: "ERR_WEBHOOK_SIGNATURE_MISMATCH" } });
    expect(l.received).toHaveLength(0);
  });

  it("still answers a replayed webhook-id as a duplicate after the agent restarts on the same state file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "doorbell-agent-replay-"));
    dirs.push(dir);
    const file = join(dir, "state.json");
    const seed = await createFileStateStore(file);
    await seed.save(stateWithSubscription());
    await seed.close?.();

    const first = await serveStateListener(await createFileStateStore(file));
    const id = newWebhookId();
    const body = statusChanged();
    expect((await ring(first.url, { secrets: [first.secret], body, id })).json.status).toBe("processed");
    await first.close();

    const second = await serveStateListener(await createFileStateStore(file));
    open.push(second);
    expect(second.secret).toBe(first.secret);
    const replay = await ring(second.url, { secrets: [second.secret], body, id });
    expect(replay).toMatchObject({ status: 200, json: { status: "duplicate" } });
    expect(second.received).toHaveLength(0);
  });

  it("forgets a processed id after 10 minutes (the window), keeping the state small", async () => {
    let clock = Date.now();
    const store = createMemoryStateStore(stateWithSubscription());
    const l = await serveStateListener(store, () => clock);
    open.push(l);
    const id = newWebhookId();
    await ring(l.url, { secrets: [l.secret], body: statusChanged(), id });
    expect(Object.keys(l.box.state.seen)).toEqual([id]);
    clock += 10 * 60_000 + 1;
    await ring(l.url, { secrets: [l.secret], body: statusChanged(), timestamp: Math.floor(clock / 1000) });
    expect(Object.keys(l.box.state.seen)).not.toContain(id);
  });
});
