import { TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { compareAck, negotiatePushBinding, type PushBindingConfig } from "../src/a2a/push-binding.js";
import { type PushDivergence, type StuckTaskAlert, TaskReconciler } from "../src/a2a/task-reconciler.js";

const card = { name: "seller", version: "3.0.0", pushNotifications: true };
const config: PushBindingConfig = {
  taskId: "t-1",
  url: "https://buyer.example/a2a/push",
  authentication: { scheme: "Bearer", credentials: "s3cret" },
};

describe("ack comparison follows what the SDKs echo (reference/a2a.md §6(a)2)", () => {
  it("an exact echo with a server-assigned id matches", () => {
    expect(compareAck(config, { ...config, id: "a7c0" })).toEqual([]);
  });
  it("the scheme compares case-insensitively (RFC 9110)", () => {
    expect(
      compareAck(config, { ...config, authentication: { scheme: "bearer", credentials: "s3cret" } }),
    ).toEqual([]);
  });
  it("absent or redacted (empty) credentials and token do not count as a change", () => {
    expect(
      compareAck(config, { taskId: "t-1", url: config.url, authentication: { scheme: "Bearer" } }),
    ).toEqual([]);
    expect(
      compareAck(config, {
        taskId: "t-1",
        url: config.url,
        token: "",
        authentication: { scheme: "Bearer", credentials: "" },
      }),
    ).toEqual([]);
  });
  it("present but different credentials, token, task id, URL or scheme each count", () => {
    expect(
      compareAck(config, { ...config, authentication: { scheme: "Bearer", credentials: "other" } }),
    ).toEqual(["credentials_changed"]);
    expect(compareAck(config, { ...config, token: "t" })).toEqual(["token_changed"]);
    expect(compareAck(config, { ...config, taskId: "t-2" })).toEqual(["task_id_changed"]);
    expect(compareAck(config, { ...config, url: "https://egress.example/relay" })).toEqual(["url_rewritten"]);
    expect(compareAck(config, { taskId: "t-1", url: config.url })).toEqual(["scheme_changed"]);
  });
  it("a URL differing only by a query parameter is rewritten (the token-in-URL downgrade)", () => {
    expect(compareAck(config, { ...config, url: `${config.url}?token=s3cret` })).toEqual(["url_rewritten"]);
  });
});

describe("negotiatePushBinding decides as the rule document does", () => {
  it("a card without push is polling, with or without a fallback, and is not a divergence", () => {
    expect(
      negotiatePushBinding({
        card: { ...card, pushNotifications: false },
        config,
        ack: undefined,
        hasPollingFallback: false,
      }),
    ).toEqual({ mode: "polling", pushUnverified: false, reasons: [] });
  });
  it("advertised push with no ack falls back to polling, or throws without a fallback", () => {
    expect(negotiatePushBinding({ card, config, ack: undefined, hasPollingFallback: true })).toEqual({
      mode: "polling",
      pushUnverified: true,
      reasons: ["no_ack"],
    });
    expect(() => negotiatePushBinding({ card, config, ack: undefined, hasPollingFallback: false })).toThrow(
      /card version 3.0.0/,
    );
  });
  it("a matching ack binds push; push_unverified overrides it", () => {
    expect(
      negotiatePushBinding({ card, config, ack: config, hasPollingFallback: true, confirmed: true }).mode,
    ).toBe("push");
    // A matching echo alone is not enough: until a delivery confirmed the agent, it is polled.
    expect(negotiatePushBinding({ card, config, ack: config, hasPollingFallback: true })).toEqual({
      mode: "polling",
      pushUnverified: false,
      reasons: ["awaiting_confirmation"],
    });
    expect(
      negotiatePushBinding({ card, config, ack: config, hasPollingFallback: true, pushUnverified: true }),
    ).toEqual({ mode: "polling", pushUnverified: true, reasons: ["push_unverified"] });
  });
});

describe("tasks/get reconciliation", () => {
  it("refuses an interval that is not shorter than the task's SLA", () => {
    const getTask = async () => ({ state: TaskState.TASK_STATE_WORKING });
    expect(() => new TaskReconciler({ getTask, intervalMs: 60_000, slaMs: 60_000 })).toThrow(
      /shorter than the task SLA/,
    );
    const r = new TaskReconciler({ getTask, intervalMs: 30_000, slaMs: 60_000 });
    expect(() => r.track("t", { card, mode: "polling", slaMs: 20_000 })).toThrow(/SLA of task t/);
  });

  it("raises one stuck-task alert for a working task older than the interval, on the injected clock", async () => {
    let now = 1_000_000;
    const alerts: StuckTaskAlert[] = [];
    const calls: string[] = [];
    const r = new TaskReconciler({
      getTask: async (id) => {
        calls.push(id);
        return { state: TaskState.TASK_STATE_WORKING };
      },
      intervalMs: 30_000,
      slaMs: 300_000,
      clock: () => now,
      onStuck: (a) => alerts.push(a),
    });
    r.track("t-9", { card, mode: "push", state: TaskState.TASK_STATE_WORKING });
    now += 30_000;
    await r.reconcileOnce();
    expect(alerts).toEqual([]);
    now += 1;
    await r.reconcileOnce();
    await r.reconcileOnce();
    expect(alerts).toEqual([
      {
        taskId: "t-9",
        agent: "seller",
        cardVersion: "3.0.0",
        state: TaskState.TASK_STATE_WORKING,
        ageMs: 30_001,
      },
    ]);
    expect(calls).toEqual(["t-9", "t-9", "t-9"]); // one tasks/get per non-terminal task per pass, push or not
  });

  it("an input-required task waiting on the other side is not stuck", async () => {
    let now = 0;
    const alerts: StuckTaskAlert[] = [];
    const r = new TaskReconciler({
      getTask: async () => ({ state: TaskState.TASK_STATE_INPUT_REQUIRED }),
      intervalMs: 10,
      slaMs: 100,
      clock: () => now,
      onStuck: (a) => alerts.push(a),
    });
    r.track("t", { card, mode: "polling", state: TaskState.TASK_STATE_INPUT_REQUIRED });
    now = 1_000;
    await r.reconcileOnce();
    expect(alerts).toEqual([]);
  });

  it("a pushed state confirmed by polling is not a divergence; an unpushed one is, once", async () => {
    const divergences: PushDivergence[] = [];
    let state = TaskState.TASK_STATE_INPUT_REQUIRED;
    const r = new TaskReconciler({
      getTask: async () => ({ state }),
      intervalMs: 10,
      slaMs: 100,
      onDivergence: (d) => divergences.push(d),
    });
    r.track("t", { card, mode: "push", state: TaskState.TASK_STATE_WORKING });
    r.notePush("t", TaskState.TASK_STATE_INPUT_REQUIRED);
    await r.reconcileOnce();
    expect(divergences).toEqual([]);
    state = TaskState.TASK_STATE_COMPLETED;
    await r.reconcileOnce();
    expect(divergences.map((d) => [d.kind, d.cardVersion])).toEqual([["binding_failure", "3.0.0"]]);
    expect(r.tracked()).toEqual([]);
  });
});
