import type {
  AgentCard,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import {
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  type PushNotificationStore,
  type ServerCallContext,
  type TaskStore,
} from "@a2a-js/sdk/server";
import { checkUrl, type EgressPolicy } from "@doorbell/webhooks";
import { EgressPushSender, type PushFailure } from "./push-sender.js";

/**
 * The SDK's request handler with push bound by the rule (specs/a2a-push-binding-rule.md) and the
 * egress policy, for an agent whose card advertises push notifications:
 * - a push config inside `SendMessage` (`message/send`) is ignored: it gets no acknowledgement,
 *   and an unacknowledged binding is refused; the task itself goes on, to be polled;
 * - `CreateTaskPushNotificationConfig` (`tasks/pushNotificationConfig/set`), whose answer is the
 *   acknowledgement, is refused at once when the egress policy refuses the URL;
 * - every POST goes through the egress (`EgressPushSender`), so the addresses a name resolves to
 *   are judged when the push is sent.
 */

export interface EgressPushOptions {
  readonly policy: EgressPolicy;
  /** Where push configs are kept. Default in memory. */
  readonly store?: PushNotificationStore;
  readonly onFailure?: (failure: PushFailure) => void;
}

/** The request without a push config: an inline one is never acknowledged. */
const withoutInlinePush = (params: SendMessageRequest): SendMessageRequest =>
  params.configuration?.taskPushNotificationConfig === undefined
    ? params
    : { ...params, configuration: { ...params.configuration, taskPushNotificationConfig: undefined } };

export class EgressPushRequestHandler extends DefaultRequestHandler {
  readonly #policy: EgressPolicy;

  constructor(card: AgentCard, taskStore: TaskStore, executor: AgentExecutor, push: EgressPushOptions) {
    const store = push.store ?? new InMemoryPushNotificationStore();
    const sender = new EgressPushSender({
      store,
      policy: push.policy,
      ...(push.onFailure === undefined ? {} : { onFailure: push.onFailure }),
    });
    super(card, taskStore, executor, undefined, store, sender);
    this.#policy = push.policy;
  }

  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return super.sendMessage(withoutInlinePush(params), context);
  }

  override sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return super.sendMessageStream(withoutInlinePush(params), context);
  }

  override async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    const checked = checkUrl(params.url, this.#policy);
    if (!checked.ok) {
      throw new RequestMalformedError(`the push notification URL is refused: ${checked.reason}`);
    }
    return super.createTaskPushNotificationConfig(params, context);
  }
}
