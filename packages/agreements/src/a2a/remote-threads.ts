import { Role, type SendMessageResult, type Task, TaskState } from "@a2a-js/sdk";
import { ServiceParameters, withA2AExtensions } from "@a2a-js/sdk/client";
import type { AgentInbox, Draft, SentMessage } from "../inbox/agent-inbox.js";
import { InboxError } from "../inbox/errors.js";
import type { Outgoing } from "../inbox/outlet.js";
import type { InboxStore, PendingAnswer, TaskBinding } from "../inbox/store.js";
import { newId } from "../message/ids.js";
import { AGREEMENTS_EXTENSION_URI, speaksAgreements } from "./agreement-card.js";
import { fromA2AMessage, toA2AMessage } from "./message-part.js";
import {
  type ChannelChoice,
  chooseChannel,
  connectToPeer,
  type PeerDiscoveryOptions,
  peerCardUrl,
  type RemoteAgent,
} from "./peer-discovery.js";
import { TERMINAL_TASK_STATES } from "./task-reconciler.js";

/**
 * The client side of agent-intents/1 over A2A: threads this agent starts at another agent's A2A
 * endpoint. The first message creates the task there (`contextId` = thread) and every later one
 * names it; each is sent with `SendMessage` (blocking, so a prompt answer comes back at once) with
 * the extension activated. The task is followed with `GetTask` (`poll`, or `follow` on a timer)
 * while it is not terminal; every agent message in its history not yet held here goes through
 * the inbox's receiver checks, so an answer the other side's owner approved later arrives the same
 * way as a prompt one. A task the other side ends with no agreement message (rejected, canceled,
 * failed) ends the thread here too.
 */

export type { RemoteAgent };

export interface RemoteThreadsOptions {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  /**
   * Reaches the agent whose card is at `cardUrl`. Default: the card fetched (v0.3 or v1.0) and a
   * JSON-RPC client of the version it declares (`connectToPeer`).
   */
  readonly connect?: (cardUrl: string) => Promise<RemoteAgent>;
  /** Where a recipient's card is looked for when no card address is given. */
  readonly discovery?: PeerDiscoveryOptions;
  /** An agent message of a followed task that was not acted on, with the reason. */
  readonly onRefused?: (thread: string, reason: string) => void | Promise<void>;
}

export interface FollowTimers {
  /** `fn` answers the pass it started (or nothing when one is still running), for timers that wait. */
  setInterval(fn: () => Promise<void> | undefined, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const EXTENSION = {
  serviceParameters: ServiceParameters.createFrom(undefined, withA2AExtensions(AGREEMENTS_EXTENSION_URI)),
};

export class A2ARemoteThreads {
  readonly #o: RemoteThreadsOptions;
  readonly #agents = new Map<string, Promise<RemoteAgent>>();
  readonly #tasks = new Map<string, Task>();
  /** Agent messages already handed to the inbox (kept or refused), by messageId. */
  readonly #seen = new Set<string>();

  constructor(options: RemoteThreadsOptions) {
    this.#o = options;
  }

  async #agent(cardUrl: string): Promise<RemoteAgent> {
    let agent = this.#agents.get(cardUrl);
    if (agent === undefined) {
      const connect = this.#o.connect ?? ((url: string) => connectToPeer(url, this.#o.discovery));
      agent = connect(cardUrl).then((found) => {
        if (!speaksAgreements(found.card)) {
          throw new InboxError(
            "ERR_A2A_PEER",
            `the agent card at ${cardUrl} does not declare agent-intents/1 with the agreements skill`,
          );
        }
        return found;
      });
      agent.catch(() => this.#agents.delete(cardUrl));
      this.#agents.set(cardUrl, agent);
    }
    return agent;
  }

  /**
   * Starts a thread at the agent whose card is at `cardUrl` (checked to speak agent-intents/1
   * first; without it, the card at the recipient's domain), within the limits or waiting for the
   * owner like any start.
   */
  async start(draft: Draft, to: string, cardUrl?: string): Promise<SentMessage | PendingAnswer | undefined> {
    cardUrl ??= peerCardUrl(to, undefined, this.#o.discovery);
    await this.#agent(cardUrl);
    const thread = newId();
    const { inbox, store } = this.#o;
    await store.bindTask({ inbox: inbox.address, thread, role: "client", taskId: "", endpoint: cardUrl });
    return inbox.start(draft, to, { channel: "a2a", thread });
  }

  /**
   * Starts a thread on the channel the recipient can take: A2A when its card (`fromCard` of an
   * earlier message, else its domain's) declares agent-intents/1 with the agreements skill,
   * e-mail otherwise. The thread then stays on that channel.
   */
  async startBest(
    draft: Draft,
    to: string,
    options: { readonly fromCard?: string } = {},
  ): Promise<{ choice: ChannelChoice; sent: SentMessage | PendingAnswer | undefined }> {
    const choice = await chooseChannel(to, { ...this.#o.discovery, ...options });
    if (choice.channel === "email") return { choice, sent: await this.#o.inbox.start(draft, to) };
    this.#agents.set(choice.cardUrl, Promise.resolve(choice.agent));
    return { choice, sent: await this.start(draft, to, choice.cardUrl) };
  }

  /** The last state of the thread's task this side saw. */
  task(thread: string): Task | undefined {
    return this.#tasks.get(thread);
  }

  /** Sends one of our messages on the thread's task (the inbox's A2A outlet calls this). */
  async send(binding: TaskBinding, outgoing: Outgoing): Promise<void> {
    if (binding.role !== "client" || binding.endpoint === null) {
      throw new InboxError(
        "ERR_A2A_NO_TASK",
        `the thread ${binding.thread} is not carried by another agent's task`,
      );
    }
    const { client } = await this.#agent(binding.endpoint);
    const taskId = binding.taskId === "" ? undefined : binding.taskId;
    const result: SendMessageResult = await client.sendMessage(
      {
        tenant: "",
        message: toA2AMessage(
          { message: outgoing.message, jws: outgoing.jws },
          { role: "user", ...(taskId === undefined ? {} : { taskId }) },
        ),
        configuration: {
          acceptedOutputModes: ["application/json"],
          taskPushNotificationConfig: undefined,
          returnImmediately: false,
        },
        metadata: undefined,
      },
      EXTENSION,
    );
    if (!("status" in result) || !("id" in result)) {
      throw new InboxError(
        "ERR_A2A_PEER",
        `the agent at ${binding.endpoint} answered with a Message, not the thread's task`,
      );
    }
    if (result.contextId !== binding.thread) {
      throw new InboxError(
        "ERR_A2A_PEER",
        `the agent at ${binding.endpoint} put thread ${binding.thread} in a task with contextId ${result.contextId}`,
      );
    }
    if (taskId === undefined) {
      await this.#o.store.bindTask({ ...binding, taskId: result.id });
    } else if (result.id !== taskId) {
      throw new InboxError(
        "ERR_A2A_PEER",
        `the agent at ${binding.endpoint} answered for task ${result.id}, not ${taskId}`,
      );
    }
    await this.#absorb(binding.thread, result);
  }

  /** Reads every open task this side follows once with `GetTask` and takes in what is new. */
  async poll(): Promise<void> {
    const { inbox, store } = this.#o;
    for (const binding of await store.clientTasks(inbox.address)) {
      if (binding.taskId === "" || binding.endpoint === null) continue;
      const last = this.#tasks.get(binding.thread)?.status?.state;
      if (last !== undefined && TERMINAL_TASK_STATES.has(last)) continue;
      const { client } = await this.#agent(binding.endpoint);
      const task = await client.getTask({ tenant: "", id: binding.taskId }, EXTENSION);
      if (task.contextId !== binding.thread) continue;
      await this.#absorb(binding.thread, task);
    }
  }

  /** Polls every `intervalMs` until stopped; errors go to `onError` and the next round tries again. */
  follow(options: {
    intervalMs: number;
    timers?: FollowTimers;
    onError?: (error: unknown) => void;
  }): () => void {
    const timers: FollowTimers = options.timers ?? {
      setInterval: (fn, ms) => setInterval(fn, ms).unref(),
      clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
    };
    let running = false;
    const handle = timers.setInterval(() => {
      if (running) return undefined;
      running = true;
      return this.poll()
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          running = false;
        });
    }, options.intervalMs);
    return () => timers.clearInterval(handle);
  }

  /** Hands the task's agent messages not yet held to the inbox, in order. */
  async #absorb(thread: string, task: Task): Promise<void> {
    this.#tasks.set(thread, task);
    const { inbox, store } = this.#o;
    const messages = [...(task.history ?? [])];
    const status = task.status?.message;
    if (status !== undefined && !messages.some((m) => m.messageId === status.messageId))
      messages.push(status);
    for (const m of messages) {
      if (m.role !== Role.ROLE_AGENT || this.#seen.has(m.messageId)) continue;
      const part = fromA2AMessage(m);
      if ("error" in part) continue; // status text, not an agreement message
      this.#seen.add(m.messageId);
      if ((await store.message(inbox.address, m.messageId)) !== undefined) continue;
      const taken = await inbox.receiveA2A({ value: part.value, jws: part.jws }, async (message) =>
        message.thread === thread
          ? undefined
          : `the message belongs to thread ${message.thread}, not ${thread}`,
      );
      if (!taken.acted) await this.#o.onRefused?.(thread, taken.reason ?? "the message was refused");
    }
    const state = task.status?.state;
    if (state === TaskState.TASK_STATE_REJECTED) await inbox.endedByPeer(thread, "refused");
    else if (state === TaskState.TASK_STATE_CANCELED || state === TaskState.TASK_STATE_FAILED) {
      await inbox.endedByPeer(thread, "cancelled");
    }
  }
}
