import { type Task, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { fromA2AMessage, toA2AMessage } from "../src/a2a/message-part.js";
import { WAITING_FOR_OWNER } from "../src/a2a/task-states.js";
import { checkRecord } from "../src/check/check.js";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { signMessage } from "../src/jws/sign.js";
import type { Message } from "../src/message/types.js";
import type { AgreementRecord } from "../src/record/types.js";
import { type A2AAgent, rawClient, sendRaw, startA2AAgent, statusText } from "./a2a-agents.js";
import { accept, askQuote } from "./inbox-parties.js";
import { ASK, acceptQuotes, closedAfterEach, counterQuote, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, buyer, resolveKey } = await twoParties();
const running = closedAfterEach<A2AAgent>();

const sellerLimits: LimitsPolicy = { version: "s-3", types: ["quote"], maxTotal: { EUR: "500000" } };
const buyerLimits: LimitsPolicy = {
  version: "b-7",
  types: ["ask_quote", "accept"],
  maxTotal: { EUR: "1000000" },
};
const quoteAnswer = (amountEach: string) => quoteDesks(amountEach, (now) => now + 3600);
const waitForThePerson: Responder = async () => undefined;

async function pair(
  options: { sellerRespond?: Responder; buyerRespond?: Responder; sellerLimits?: LimitsPolicy } = {},
) {
  const s = await startA2AAgent({
    party: seller,
    policy: options.sellerLimits ?? sellerLimits,
    respond: options.sellerRespond ?? quoteAnswer("45000"),
    resolveKey,
  });
  const b = await startA2AAgent({
    party: buyer,
    policy: buyerLimits,
    respond: options.buyerRespond ?? acceptQuotes,
    resolveKey,
  });
  running.push(s, b);
  return { s, b };
}

/** The buyer asks the seller for a quote over A2A; returns the thread and the seller's task. */
async function ask(s: A2AAgent, b: A2AAgent): Promise<{ thread: string; taskId: string }> {
  const sent = await b.a2a.remote.start(ASK, seller.address, s.cardUrl);
  const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
  expect(thread).not.toBe("");
  const binding = await b.store.taskBinding(buyer.address, thread);
  return { thread, taskId: binding?.taskId ?? "" };
}

async function sellerTask(s: A2AAgent, taskId: string): Promise<Task> {
  return (await rawClient(s)).getTask({ tenant: "", id: taskId });
}

/** The seller's quote on its task, as the buyer saw it. */
async function heldQuote(b: A2AAgent, thread: string): Promise<{ message: Message; hash: string }> {
  const quote = (await b.store.thread(buyer.address, thread)).find((m) => m.type === "quote");
  if (quote === undefined) throw new Error("the buyer holds no quote");
  return { message: JSON.parse(quote.canonical) as Message, hash: quote.hash };
}

/** An accept the buyer's own inbox would refuse to send, signed with the buyer's real key. */
async function craftedAccept(offer: { message: Message; hash: string }, iat: number, taskId: string) {
  const signed = await signMessage(accept(buyer, seller, iat, offer), buyer.key, {
    jku: buyer.jku,
  });
  return toA2AMessage({ message: signed.parsed.message, jws: signed.jws }, { role: "user", taskId });
}

describe("agent-intents/1 over A2A with @a2a-js/sdk on loopback", () => {
  it("one thread is one task: a quote agreed within the limits completes with the record as an Artifact", async () => {
    const { s, b } = await pair();
    const { thread, taskId } = await ask(s, b);
    const task = await sellerTask(s, taskId);
    expect(task.contextId).toBe(thread);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Every agreement message on the task is one DataPart with the message and its JWS.
    const kinds = task.history.map((m) => {
      const part = fromA2AMessage(m);
      return "error" in part ? "text" : `${m.role}:${(part.value as Message).type}:${typeof part.jws}`;
    });
    expect(kinds.filter((k) => k !== "text")).toEqual([
      "1:ask_quote:string",
      "2:quote:string",
      "1:accept:string",
    ]);
    const artifact = task.artifacts.find((a) => a.artifactId === `record-${thread}`);
    const content = artifact?.parts[0]?.content;
    expect(content?.$case).toBe("data");
    const published = content?.$case === "data" ? (content.value as AgreementRecord) : undefined;
    expect(await checkRecord(published, { resolveKey })).toMatchObject({
      ok: true,
      result: "two_signatures",
    });
    for (const [side, agent, address] of [
      ["seller", s, seller.address],
      ["buyer", b, buyer.address],
    ] as const) {
      expect(await agent.store.threadState(address, thread), side).toEqual({
        state: "agreed",
        channel: "a2a",
      });
      const record = await agent.store.record(address, thread);
      expect(await checkRecord(record, { resolveKey }), side).toMatchObject({
        ok: true,
        result: "two_signatures",
      });
    }
    expect(b.a2a.remote.task(thread)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const quote = JSON.parse((await s.store.thread(seller.address, thread))[1]?.canonical ?? "{}");
    expect(quote.authority).toEqual({ decided_by: "limits", limits_version: "s-3" });
  });

  it("a quote over the limits leaves the task working, 'Waiting for the owner', and completes after approval", async () => {
    const { s, b } = await pair({ sellerRespond: quoteAnswer("150000") });
    const { thread, taskId } = await ask(s, b);
    const waiting = b.a2a.remote.task(thread);
    expect(waiting?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(statusText(waiting)).toBe(WAITING_FOR_OWNER);
    const [pending] = await s.inbox.pending();
    expect(pending?.channel).toBe("a2a");
    expect(pending?.reasons).toEqual(["the total 600000 EUR is over the limit of 500000 EUR"]);
    // Nothing new on the task until the owner decides: polling leaves it waiting.
    await b.a2a.remote.poll();
    expect(b.a2a.remote.task(thread)?.status?.state).toBe(TaskState.TASK_STATE_WORKING);

    await s.inbox.approve(pending?.id ?? "");
    expect((await sellerTask(s, taskId)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // The buyer follows the task on a timer (fired by hand), reads the approved quote and accepts it.
    let fire: (() => Promise<void> | undefined) | undefined;
    const stop = b.a2a.remote.follow({
      intervalMs: 5_000,
      timers: {
        setInterval: (fn) => {
          fire = fn;
          return 1;
        },
        clearInterval: () => {
          fire = undefined;
        },
      },
    });
    // The pass the timer started, awaited: the buyer read, accepted and the seller sealed in it.
    await fire?.();
    expect(b.a2a.remote.task(thread)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    stop();
    expect(fire).toBeUndefined();
    const done = await sellerTask(s, taskId);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts.map((a) => a.artifactId)).toEqual([`record-${thread}`]);
    for (const [agent, address] of [
      [s, seller.address],
      [b, buyer.address],
    ] as const) {
      const record = await agent.store.record(address, thread);
      expect(await checkRecord(record, { resolveKey })).toMatchObject({
        ok: true,
        result: "two_signatures",
      });
    }
    const quote = JSON.parse((await s.store.thread(seller.address, thread))[1]?.canonical ?? "{}");
    expect(quote.authority).toEqual({ decided_by: "owner" });
  });

  it("a record whose terms were changed after sealing does not check out, with the reason", async () => {
    const { s, b } = await pair();
    const { thread } = await ask(s, b);
    const record = structuredClone((await s.store.record(seller.address, thread)) as AgreementRecord);
    (record.terms as { total: { amount: string } }).total.amount = "1";
    const result = await checkRecord(record, { resolveKey });
    expect(result).toMatchObject({ ok: false, result: "does_not_check_out" });
    expect(result.ok ? "" : result.reason).toMatch(/^the record was changed after it was sealed/);
  });

  it("an accept signed after the offer expired is refused: the task is canceled with the reason, no record", async () => {
    const { s, b } = await pair({ buyerRespond: waitForThePerson });
    const { thread, taskId } = await ask(s, b);
    const quote = await heldQuote(b, thread);
    // The buyer's own lifecycle would not send it; a crafted one, signed with the buyer's key:
    const late = await craftedAccept(quote, quote.message.exp + 60, taskId);
    const task = await sendRaw(await rawClient(s), late);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(statusText(task)).toBe("the offer had expired when it was accepted");
    expect(await s.store.threadState(seller.address, thread)).toMatchObject({ state: "expired" });
    expect(await s.store.record(seller.address, thread)).toBeUndefined();
    expect(task.artifacts).toEqual([]);
  });

  it("an accept of a replaced offer is refused: the task stays input-required with the reason", async () => {
    const { s, b } = await pair({ buyerRespond: waitForThePerson });
    const { thread, taskId } = await ask(s, b);
    const first = await heldQuote(b, thread);
    const held = await s.store.thread(seller.address, thread);
    const counter = await s.inbox.complete(
      counterQuote(first.message.id),
      buyer.address,
      held.find((m) => m.type === "ask_quote"),
    );
    // Sent long after the execute that created the task: it reaches the task through the task store.
    await s.inbox.sendMessage(counter, { decided_by: "owner" });
    await b.a2a.remote.poll();
    expect((await b.store.thread(buyer.address, thread)).filter((m) => m.type === "quote")).toHaveLength(2);

    const task = await sendRaw(
      await rawClient(s),
      await craftedAccept(first, Math.floor(Date.now() / 1000), taskId),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusText(task)).toBe("the offer had been replaced when it was accepted");
    expect(await s.store.record(seller.address, thread)).toBeUndefined();
    expect(s.refused).toEqual(["the offer had been replaced when it was accepted"]);
  });

  it("a counterparty the owner's limits block is rejected, and the thread ends on both sides", async () => {
    const { s, b } = await pair({ sellerLimits: { ...sellerLimits, blocked: ["@buyer.example"] } });
    const { thread, taskId } = await ask(s, b);
    const task = await sellerTask(s, taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusText(task)).toBe("the owner's limits block agent@buyer.example");
    expect(await s.store.threadState(seller.address, thread)).toEqual({
      state: "refused",
      channel: "a2a",
    });
    expect(await b.store.threadState(buyer.address, thread)).toEqual({
      state: "refused",
      channel: "a2a",
    });
  });

  it("a first message without a JWS the agent can trust is rejected, with the reason", async () => {
    const { s } = await pair();
    const message = askQuote(buyer, seller, Math.floor(Date.now() / 1000));
    const task = await sendRaw(await rawClient(s), toA2AMessage({ message }, { role: "user" }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusText(task)).toMatch(/^over A2A a message authenticates itself by its JWS/);
    expect(await s.store.threadState(seller.address, message.thread)).toBeUndefined();
  });

  it("a message whose thread is not the task's contextId is rejected (one thread is one task)", async () => {
    const { s } = await pair();
    const signed = await signMessage(askQuote(buyer, seller, Math.floor(Date.now() / 1000)), buyer.key, {
      jku: buyer.jku,
    });
    const a2aMessage = toA2AMessage({ message: signed.parsed.message, jws: signed.jws }, { role: "user" });
    const task = await sendRaw(await rawClient(s), { ...a2aMessage, contextId: crypto.randomUUID() });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusText(task)).toMatch(/but the task's contextId is/);
  });
});
