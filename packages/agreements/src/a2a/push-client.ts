import type { AgentCard, TaskPushNotificationConfig, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  negotiatePushBinding,
  type PushBindingAck,
  type PushBindingConfig,
  type PushBindingDecision,
  type PushCardFacts,
} from "./push-binding.js";
import type { PushReceiver } from "./push-receiver.js";
import type { TaskReconciler } from "./task-reconciler.js";

/**
 * Applies the push binding rule to one task through an `@a2a-js/sdk` client: register the config
 * with `CreateTaskPushNotificationConfig` (an inline config in `SendMessage` yields no ack), compare
 * the echo, then either bind the receiver or refuse push, delete the remote config (best effort)
 * and poll. A matching echo from an agent not yet seen honouring the scheme is bound but polled
 * until its first authenticated delivery confirms it (the rule's "prior successful delivery").
 * Either way the task is tracked by the reconciler.
 */

export function pushCardFacts(card: AgentCard): PushCardFacts {
  return {
    name: card.name,
    version: card.version,
    pushNotifications: card.capabilities?.pushNotifications === true,
  };
}

export function ackFromSdk(config: TaskPushNotificationConfig): PushBindingAck {
  return {
    id: config.id,
    taskId: config.taskId,
    url: config.url,
    token: config.token,
    ...(config.authentication === undefined
      ? {}
      : {
          authentication: {
            scheme: config.authentication.scheme,
            credentials: config.authentication.credentials,
          },
        }),
  };
}

export interface BindPushOptions {
  readonly client: Client;
  readonly card: AgentCard;
  readonly config: PushBindingConfig;
  readonly receiver: PushReceiver;
  readonly reconciler: TaskReconciler;
  /** Default true: the reconciler is the fallback. */
  readonly hasPollingFallback?: boolean;
  readonly pushUnverified?: boolean;
  readonly slaMs?: number;
  /** The task's state when it was bound (from the `SendMessage` answer). */
  readonly state?: TaskState;
}

export interface BindPushResult extends PushBindingDecision {
  readonly ack: PushBindingAck | undefined;
}

export async function bindPush(options: BindPushOptions): Promise<BindPushResult> {
  const { client, config, receiver, reconciler } = options;
  const card = pushCardFacts(options.card);
  let ack: PushBindingAck | undefined;
  if (card.pushNotifications && options.pushUnverified !== true) {
    try {
      const echoed = await client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: config.taskId,
        url: config.url,
        token: config.token ?? "",
        authentication:
          config.authentication === undefined
            ? undefined
            : { scheme: config.authentication.scheme, credentials: config.authentication.credentials ?? "" },
      });
      ack = ackFromSdk(echoed);
    } catch {
      ack = undefined;
    }
  }
  const refuse = async () => {
    if (ack?.id === undefined || ack.id === "") return;
    await client
      .deleteTaskPushNotificationConfig({ tenant: "", taskId: config.taskId, id: ack.id })
      .catch(() => {});
  };
  let decision: PushBindingDecision;
  try {
    decision = negotiatePushBinding({
      card,
      config,
      ack,
      hasPollingFallback: options.hasPollingFallback ?? true,
      confirmed: reconciler.confirmed(card),
      ...(options.pushUnverified === undefined ? {} : { pushUnverified: options.pushUnverified }),
    });
  } catch (error) {
    await refuse();
    throw error;
  }
  // A binding awaiting confirmation is bound, so its first delivery can confirm it.
  const awaitingConfirmation = decision.reasons.includes("awaiting_confirmation");
  if (decision.mode === "push" || awaitingConfirmation) receiver.bind(config);
  else await refuse();
  reconciler.track(config.taskId, {
    card,
    mode: decision.mode,
    pushUnverified: decision.pushUnverified,
    awaitingConfirmation,
    refusedReasons: decision.pushUnverified ? decision.reasons : [],
    ...(options.state === undefined ? {} : { state: options.state }),
    ...(options.slaMs === undefined ? {} : { slaMs: options.slaMs }),
  });
  return { ...decision, ack };
}
