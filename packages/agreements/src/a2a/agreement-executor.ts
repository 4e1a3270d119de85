import { TaskState } from "@a2a-js/sdk";
import { TaskNotCancelableError } from "@a2a-js/sdk/errors";
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import type { AgentInbox } from "../inbox/agent-inbox.js";
import type { InboxStore } from "../inbox/store.js";
import type { Message } from "../message/types.js";
import { fromA2AMessage } from "./message-part.js";
import type { AgreementTaskPublisher } from "./task-publisher.js";

/**
 * The `@a2a-js/sdk` server side of agent-intents/1: one thread is one task (`contextId` is the
 * thread). Each incoming Message must carry one DataPart with the message and its JWS; it runs
 * through the inbox's receiver checks (`checkReceivedMessage`, no mail check: only a signed and
 * checked message is acted on), then the inbox's lifecycle, limits and responder. What the inbox
 * answers or decides is shown on the task by the publisher. A message that is not acted on leaves
 * an existing thread as it was, with the reason as status text; a new task it would have started
 * is rejected with the reason.
 */

export interface AgreementExecutorOptions {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  readonly publisher: AgreementTaskPublisher;
  /** Epoch milliseconds, for the new task's timestamp. */
  readonly clock?: () => number;
}

export class AgreementExecutor implements AgentExecutor {
  readonly #o: AgreementExecutorOptions;

  constructor(options: AgreementExecutorOptions) {
    this.#o = options;
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = context;
    const isNew = context.task === undefined;
    if (isNew) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date((this.#o.clock ?? Date.now)()).toISOString(),
          },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        }),
      );
    }
    const { publisher } = this.#o;
    publisher.open(taskId, bus);
    try {
      const part = fromA2AMessage(userMessage);
      const taken =
        "error" in part
          ? { acted: false, reason: `not an agreement message: ${part.error}` }
          : await this.#o.inbox.receiveA2A({ value: part.value, jws: part.jws }, (message) =>
              this.#admit(message, taskId, contextId, isNew),
            );
      if (!taken.acted)
        await this.#refuse(taskId, contextId, isNew, taken.reason ?? "the message was refused");
    } finally {
      publisher.close(taskId);
    }
  }

  /** Ties the thread to this task, or says why the message does not belong to it. */
  async #admit(
    message: Message,
    taskId: string,
    contextId: string,
    isNew: boolean,
  ): Promise<string | undefined> {
    if (message.thread !== contextId) {
      return `the message belongs to thread ${message.thread}, but the task's contextId is ${contextId} (one thread is one task)`;
    }
    const { store, inbox } = this.#o;
    const binding = await store.taskBinding(inbox.address, message.thread);
    if (binding === undefined) {
      if (!isNew) return `the task ${taskId} carries no agreement thread`;
      if ((await store.threadState(inbox.address, message.thread)) !== undefined) {
        return `the thread ${message.thread} is already held here on another channel; a thread never switches channel`;
      }
      await store.bindTask({
        inbox: inbox.address,
        thread: message.thread,
        role: "server",
        taskId,
        endpoint: null,
      });
      return undefined;
    }
    if (binding.role !== "server" || binding.taskId !== taskId) {
      return `the thread ${message.thread} is carried by another task`;
    }
    return undefined;
  }

  async #refuse(taskId: string, contextId: string, isNew: boolean, reason: string): Promise<void> {
    const { store, inbox, publisher } = this.#o;
    const binding = await store.taskBinding(inbox.address, contextId);
    const held = await store.threadState(inbox.address, contextId);
    if (isNew || binding?.taskId !== taskId || held === undefined) {
      await publisher.rejected(taskId, contextId, reason);
      return;
    }
    await publisher.state(taskId, contextId, held.state, reason);
  }

  /** An agreement thread ends with a signed cancel or decline, which `tasks/cancel` cannot carry. */
  async cancelTask(taskId: string): Promise<void> {
    throw new TaskNotCancelableError(
      `the task ${taskId} is an agreement thread: it ends with a signed cancel or decline message, not tasks/cancel`,
    );
  }
}
