import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Task, TaskState } from "@a2a-js/sdk";
import { toNodeHandler } from "@doorbell/webhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bindPush, pushCardFacts } from "../src/a2a/push-client.js";
import { createPushReceiver } from "../src/a2a/push-receiver.js";
import { type PushDivergence, TaskReconciler } from "../src/a2a/task-reconciler.js";
import { type Behaviour, type GatedServer, startGatedServer, textMessage } from "./a2a-push-servers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup(behaviour: Behaviour) {
  const remote: GatedServer = await startGatedServer(behaviour);
  cleanups.push(() => remote.close());
  const client = await remote.client();
  const divergences: PushDivergence[] = [];
  const states: { taskId: string; state: TaskState; via: string }[] = [];
  const reconciler = new TaskReconciler({
    getTask: async (taskId) => {
      const task = await client.getTask({ tenant: "", id: taskId, historyLength: 0 });
      return { state: task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED };
    },
    intervalMs: 1000,
    slaMs: 60_000,
    onDivergence: (d) => divergences.push(d),
    onState: (taskId, state, via) => states.push({ taskId, state, via }),
  });
  const receiver = createPushReceiver({ reconciler });
  const requests: { status: number }[] = [];
  const webhook = http.createServer((req, res) => {
    res.on("finish", () => requests.push({ status: res.statusCode }));
    toNodeHandler((request) => receiver.handle(request))(req, res);
  });
  await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => webhook.close(() => resolve())));
  const webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/a2a/push`;
  const task = (await client.sendMessage({
    tenant: "",
    message: textMessage("quote please"),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: true,
    },
    metadata: undefined,
  })) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
  const config = {
    taskId: task.id,
    url: webhookUrl,
    authentication: { scheme: "Bearer", credentials: `cred-${task.id}` },
  };
  return { remote, client, reconciler, receiver, divergences, states, requests, task, config };
}

describe("A2A push binding rule against @a2a-js/sdk servers", () => {
  it("a binding acknowledged as sent is confirmed by its first authenticated delivery, which then counts for the agent's next task", async () => {
    const s = await setup("honours");
    const result = await bindPush({ ...s, card: s.remote.card, state: TaskState.TASK_STATE_WORKING });
    // The echo matched, but this agent was never seen honouring the scheme: polled until a delivery.
    expect(result).toMatchObject({
      mode: "polling",
      pushUnverified: false,
      reasons: ["awaiting_confirmation"],
    });
    expect(result.ack?.url).toBe(s.config.url);
    expect(s.reconciler.get(s.task.id)).toMatchObject({ mode: "polling", awaitingConfirmation: true });
    expect(s.reconciler.confirmed(pushCardFacts(s.remote.card))).toBe(false);
    s.remote.release(s.task.id);
    await vi.waitFor(() => expect(s.reconciler.get(s.task.id)).toBeUndefined());
    expect(s.states).toEqual([{ taskId: s.task.id, state: TaskState.TASK_STATE_COMPLETED, via: "push" }]);
    expect(s.requests.every((r) => r.status === 204)).toBe(true);
    expect(s.divergences).toEqual([]);
    expect(s.reconciler.confirmed(pushCardFacts(s.remote.card))).toBe(true);

    // Prior successful delivery: the same agent's next task binds push at once.
    const next = (await s.client.sendMessage({
      tenant: "",
      message: textMessage("another quote"),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: true,
      },
      metadata: undefined,
    })) as Task;
    const second = await bindPush({
      ...s,
      card: s.remote.card,
      config: {
        ...s.config,
        taskId: next.id,
        authentication: { scheme: "Bearer", credentials: `cred-${next.id}` },
      },
      state: TaskState.TASK_STATE_WORKING,
    });
    expect(second).toMatchObject({ mode: "push", pushUnverified: false, reasons: [] });
    s.remote.release(next.id);
    await vi.waitFor(() => expect(s.reconciler.get(next.id)).toBeUndefined());
    expect(s.states.at(-1)).toEqual({ taskId: next.id, state: TaskState.TASK_STATE_COMPLETED, via: "push" });
  });

  it("refuses push (not the task) when the ack rewrites the URL and drops the scheme, and polling finds completion", async () => {
    const s = await setup("rewrites-ack");
    const result = await bindPush({ ...s, card: s.remote.card, state: TaskState.TASK_STATE_WORKING });
    expect(result.mode).toBe("polling");
    expect(result.pushUnverified).toBe(true);
    expect(result.reasons).toEqual(["url_rewritten", "scheme_changed", "token_changed"]);
    expect(s.divergences).toEqual([
      expect.objectContaining({
        kind: "binding_refused",
        agent: "push-rewrites-ack",
        cardVersion: "2.4.1",
        taskId: s.task.id,
      }),
    ]);
    // The refused config was deleted on the remote: nothing is pushed to us.
    await expect(
      s.client.listTaskPushNotificationConfig({ tenant: "", taskId: s.task.id, pageSize: 0, pageToken: "" }),
    ).resolves.toMatchObject({ configs: [] });
    s.remote.release(s.task.id);
    await vi.waitFor(async () => {
      await s.reconciler.reconcileOnce();
      expect(s.reconciler.get(s.task.id)).toBeUndefined();
    });
    expect(s.states).toEqual([{ taskId: s.task.id, state: TaskState.TASK_STATE_COMPLETED, via: "polling" }]);
    expect(s.requests).toEqual([]);
  });

  it("answers a push that drops the declared Authorization with 401, sets push_unverified and logs it with the card version", async () => {
    const s = await setup("downgrades-delivery");
    const result = await bindPush({ ...s, card: s.remote.card, state: TaskState.TASK_STATE_WORKING });
    expect(result.reasons).toEqual(["awaiting_confirmation"]); // the echo matched: only delivery shows the downgrade
    s.remote.release(s.task.id);
    await vi.waitFor(() => expect(s.requests.length).toBeGreaterThan(0));
    expect(s.requests.every((r) => r.status === 401)).toBe(true);
    expect(s.reconciler.get(s.task.id)).toMatchObject({ pushUnverified: true, mode: "polling" });
    expect(s.divergences[0]).toMatchObject({
      kind: "push_auth_failed",
      cardVersion: "2.4.1",
      reasons: ["no Authorization header (the binding declared Bearer)"],
    });
    await s.reconciler.reconcileOnce();
    expect(s.reconciler.get(s.task.id)).toBeUndefined();
    expect(s.states.at(-1)).toEqual({
      taskId: s.task.id,
      state: TaskState.TASK_STATE_COMPLETED,
      via: "polling",
    });
  });

  it("logs a binding failure when polling sees a transition the acknowledged push never delivered", async () => {
    const s = await setup("drops-delivery");
    const result = await bindPush({ ...s, card: s.remote.card, state: TaskState.TASK_STATE_WORKING });
    expect(result.reasons).toEqual(["awaiting_confirmation"]);
    s.remote.release(s.task.id);
    await vi.waitFor(async () => {
      await s.reconciler.reconcileOnce();
      expect(s.reconciler.get(s.task.id)).toBeUndefined();
    });
    expect(s.requests).toEqual([]);
    expect(s.divergences).toEqual([
      expect.objectContaining({
        kind: "binding_failure",
        agent: "push-drops-delivery",
        cardVersion: "2.4.1",
      }),
    ]);
  });

  it("a push_unverified task is never bound again: the flag forces polling", async () => {
    const s = await setup("honours");
    const result = await bindPush({ ...s, card: s.remote.card, pushUnverified: true });
    expect(result).toMatchObject({
      mode: "polling",
      pushUnverified: true,
      reasons: ["push_unverified"],
      ack: undefined,
    });
    await expect(
      s.client.listTaskPushNotificationConfig({ tenant: "", taskId: s.task.id, pageSize: 0, pageToken: "" }),
    ).resolves.toMatchObject({ configs: [] });
    s.remote.release(s.task.id);
  });

  it("with no polling fallback an unacknowledged binding is an error, not a silent push", async () => {
    const s = await setup("rewrites-ack");
    await expect(bindPush({ ...s, card: s.remote.card, hasPollingFallback: false })).rejects.toMatchObject({
      code: "ERR_PUSH_BINDING_UNVERIFIED",
      reasons: ["url_rewritten", "scheme_changed", "token_changed"],
    });
    s.remote.release(s.task.id);
  });
});
