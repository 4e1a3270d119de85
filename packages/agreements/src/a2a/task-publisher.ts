import { type Message as A2AMessage, Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  ResultManager,
  ServerCallContext,
  type TaskStore,
} from "@a2a-js/sdk/server";
import type { Outgoing } from "../inbox/outlet.js";
import type { ThreadState } from "../inbox/store.js";
import { recordArtifact, toA2AMessage } from "./message-part.js";
import { taskStateOf } from "./task-states.js";

/**
 * Shows a thread on the task it lives on (this agent's A2A server): the spec's state mapping as
 * the task status, our agreement message as the status message, the status text ("Waiting for the
 * owner", or why a message was refused) as a text part, and the record as an Artifact before the
 * task completes. While an `execute` runs, events go on its bus; afterwards (an owner who approves
 * a day later) they go through the SDK's own `ResultManager` into the task store, where the other
 * side reads them with `tasks/get`.
 */

export interface TaskPublisherOptions {
  readonly taskStore: TaskStore;
  /** The record this side holds for a thread, for the Artifact on completion. */
  readonly record: (thread: string) => Promise<unknown | undefined>;
  /**
   * The call context tasks are stored under outside a request. Default: an unauthenticated one,
   * as `a2aHttpHandler` serves (agreement messages authenticate themselves by their JWS).
   */
  readonly context?: () => ServerCallContext;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
}

function textMessage(text: string, taskId: string, contextId: string): A2AMessage {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [
      { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export class AgreementTaskPublisher {
  readonly #o: TaskPublisherOptions;
  readonly #live = new Map<string, ExecutionEventBus>();

  constructor(options: TaskPublisherOptions) {
    this.#o = options;
  }

  /** Routes the task's events to the bus of the `execute` now running for it. */
  open(taskId: string, bus: ExecutionEventBus): void {
    this.#live.set(taskId, bus);
  }

  close(taskId: string): void {
    this.#live.delete(taskId);
  }

  async #publish(taskId: string, event: AgentExecutionEvent): Promise<void> {
    const bus = this.#live.get(taskId);
    if (bus !== undefined) {
      bus.publish(event);
      return;
    }
    const context = this.#o.context?.() ?? new ServerCallContext();
    await new ResultManager(this.#o.taskStore, context).processEvent(event);
  }

  async #status(taskId: string, thread: string, state: TaskState, message: A2AMessage | undefined) {
    await this.#publish(
      taskId,
      AgentEvent.statusUpdate({
        taskId,
        contextId: thread,
        status: { state, message, timestamp: new Date((this.#o.clock ?? Date.now)()).toISOString() },
        metadata: undefined,
      }),
    );
  }

  /** The record goes on the task before the task completes (a terminal status ends the stream). */
  async #artifact(taskId: string, thread: string, record: unknown): Promise<void> {
    if (record === undefined) return;
    await this.#publish(
      taskId,
      AgentEvent.artifactUpdate({
        taskId,
        contextId: thread,
        artifact: recordArtifact(record, thread),
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
  }

  /** A message of ours leaves on the task: the status after it, with the message. */
  async message(taskId: string, outgoing: Outgoing, state: ThreadState): Promise<void> {
    const thread = outgoing.message.thread;
    if (state === "agreed")
      await this.#artifact(taskId, thread, outgoing.record ?? (await this.#o.record(thread)));
    const message = toA2AMessage({ message: outgoing.message, jws: outgoing.jws }, { role: "agent", taskId });
    await this.#status(taskId, thread, taskStateOf(state).state, message);
  }

  /** The thread reached `state` with no message of ours; `reason` says why, when a message was refused. */
  async state(taskId: string, thread: string, state: ThreadState, reason?: string): Promise<void> {
    if (state === "agreed") await this.#artifact(taskId, thread, await this.#o.record(thread));
    const mapped = taskStateOf(state);
    const text = reason ?? mapped.text;
    await this.#status(
      taskId,
      thread,
      mapped.state,
      text === undefined ? undefined : textMessage(text, taskId, thread),
    );
  }

  /** A task refused outright (its first message failed the checks, or it cannot be an agreement thread). */
  async rejected(taskId: string, thread: string, reason: string): Promise<void> {
    await this.#status(taskId, thread, TaskState.TASK_STATE_REJECTED, textMessage(reason, taskId, thread));
  }
}
