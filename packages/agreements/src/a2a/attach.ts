import type { AgentCard } from "@a2a-js/sdk";
import { type DefaultRequestHandler, InMemoryTaskStore, type TaskStore } from "@a2a-js/sdk/server";
import { type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import type { AgentInbox } from "../inbox/agent-inbox.js";
import { InboxError } from "../inbox/errors.js";
import type { Outlet } from "../inbox/outlet.js";
import type { InboxStore } from "../inbox/store.js";
import { AgreementExecutor } from "./agreement-executor.js";
import { EgressPushRequestHandler } from "./push-request-handler.js";
import type { PushFailure } from "./push-sender.js";
import { A2ARemoteThreads, type RemoteThreadsOptions } from "./remote-threads.js";
import { AgreementTaskPublisher } from "./task-publisher.js";

/**
 * Puts an agent inbox on A2A: the server side (an `@a2a-js/sdk` request handler whose executor
 * hands incoming messages to the inbox; mount it with `a2aHttpHandler`), the client side (threads
 * started at other agents) and the inbox's A2A outlet, which sends each message of ours the way its
 * thread is carried: on our own task's status when the thread lives here, with `SendMessage` to
 * the other agent when it lives there.
 */

export interface AttachA2AOptions {
  readonly inbox: AgentInbox;
  /** The inbox's store (thread ↔ task bindings live there). */
  readonly store: InboxStore;
  /** This agent's card (`agreementAgentCard`). */
  readonly card: AgentCard;
  /**
   * Where this agent's tasks are kept: `createSqlTaskStore(handle)` on the inbox's database keeps
   * them across restarts. Default in memory (for tests and one-off agents).
   */
  readonly taskStore?: TaskStore;
  readonly connect?: RemoteThreadsOptions["connect"];
  readonly onRefused?: RemoteThreadsOptions["onRefused"];
  /** Where recipients' cards are looked for (`A2ARemoteThreads.start` without a card address). */
  readonly discovery?: RemoteThreadsOptions["discovery"];
  /** Epoch milliseconds, for status timestamps. */
  readonly clock?: () => number;
  /**
   * Where task updates may be pushed when the card advertises push notifications: a push URL comes
   * from the peer, so it is judged like a doorbell's. Default `productionPolicy()`.
   */
  readonly pushPolicy?: EgressPolicy;
  /** A push that was refused or failed (the task goes on; the peer can poll it). */
  readonly onPushFailure?: (failure: PushFailure) => void;
}

export interface A2AAgreements {
  readonly requestHandler: DefaultRequestHandler;
  readonly remote: A2ARemoteThreads;
  readonly taskStore: TaskStore;
}

export function attachA2A(options: AttachA2AOptions): A2AAgreements {
  const { inbox, store } = options;
  const taskStore = options.taskStore ?? new InMemoryTaskStore();
  const publisher = new AgreementTaskPublisher({
    taskStore,
    record: (thread) => inbox.record(thread),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const remote = new A2ARemoteThreads({
    inbox,
    store,
    ...(options.connect === undefined ? {} : { connect: options.connect }),
    ...(options.onRefused === undefined ? {} : { onRefused: options.onRefused }),
    ...(options.discovery === undefined ? {} : { discovery: options.discovery }),
  });
  const binding = async (thread: string) => {
    const found = await store.taskBinding(inbox.address, thread);
    if (found === undefined) {
      throw new InboxError("ERR_A2A_NO_TASK", `the thread ${thread} is carried by A2A but has no task`);
    }
    return found;
  };
  const outlet: Outlet = {
    async deliver(outgoing, state) {
      const found = await binding(outgoing.message.thread);
      if (found.role === "server") await publisher.message(found.taskId, outgoing, state);
      else await remote.send(found, outgoing);
    },
    async stateChanged(thread, state) {
      const found = await binding(thread);
      // A task on the other agent's server shows their state, not ours.
      if (found.role === "server") await publisher.state(found.taskId, thread, state);
    },
  };
  inbox.connect("a2a", outlet);
  const executor = new AgreementExecutor({
    inbox,
    store,
    publisher,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const requestHandler = new EgressPushRequestHandler(options.card, taskStore, executor, {
    policy: options.pushPolicy ?? productionPolicy(),
    ...(options.onPushFailure === undefined ? {} : { onFailure: options.onPushFailure }),
  });
  return { requestHandler, remote, taskStore };
}
