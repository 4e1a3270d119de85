import type { StreamResponse, Task, TaskPushNotificationConfig } from "@a2a-js/sdk";
import { V03PushNotificationSerializer } from "@a2a-js/sdk/compat/v0_3/server";
import {
  type PushNotificationSender,
  type PushNotificationSerializer,
  type PushNotificationStore,
  type ServerCallContext,
  V1PushNotificationSerializer,
} from "@a2a-js/sdk/server";
import { type EgressPolicy, type EgressResult, postWebhook } from "@doorbell/webhooks";

/**
 * The `@a2a-js/sdk` push sender, through Doorbell's egress instead of the global `fetch`: a push
 * config's URL comes from the peer, so every POST is judged like a doorbell (the URL before any
 * socket, every address it resolves to, no redirects, one deadline, a capped answer). The body
 * and the authentication headers are the SDK's: the v1.0 or v0.3 body for the version the config
 * was registered over, `Authorization: <scheme> <credentials>` or the legacy token header.
 */

/** The SDK's legacy token header, sent when a config has a token and no authentication. */
const TOKEN_HEADER = "x-a2a-notification-token";

export interface PushFailure {
  readonly taskId: string;
  readonly url: string;
  /** The egress's own words, never text from the endpoint. */
  readonly reason: string;
}

export interface EgressPushSenderOptions {
  readonly store: PushNotificationStore;
  readonly policy: EgressPolicy;
  /** A POST that was refused or failed. Default: nothing (the task is unaffected). */
  readonly onFailure?: (failure: PushFailure) => void;
}

const taskIdOf = (response: StreamResponse): string => {
  const payload = response.payload;
  if (payload === undefined) return "";
  return payload.$case === "task" ? payload.value.id : payload.value.taskId;
};

const authHeaders = (config: TaskPushNotificationConfig): Record<string, string> => {
  const { authentication, token } = config;
  if (authentication?.scheme && authentication.credentials) {
    return { authorization: `${authentication.scheme} ${authentication.credentials}` };
  }
  return token ? { [TOKEN_HEADER]: token } : {};
};

export class EgressPushSender implements PushNotificationSender {
  readonly #o: EgressPushSenderOptions;
  readonly #v1 = new V1PushNotificationSerializer();
  readonly #v03 = new V03PushNotificationSerializer();
  /** One task's notifications go out in order, as the SDK's sender sends them. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(options: EgressPushSenderOptions) {
    this.#o = options;
  }

  async send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (taskId === "") return;
    const { store } = this.#o;
    const stored = store.loadWithMetadata
      ? await store.loadWithMetadata(taskId, context)
      : (await store.load(taskId, context)).map((config) => ({
          config,
          wireVersion: context.requestedVersion ?? "1.0",
        }));
    if (stored.length === 0) return;
    const previous = this.#chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() =>
      Promise.all(
        stored.map(({ config, wireVersion }) =>
          this.#post(taskId, config, this.#serializer(wireVersion), response, task),
        ),
      ).then(() => {}),
    );
    this.#chains.set(taskId, next);
    await next.finally(() => {
      if (this.#chains.get(taskId) === next) this.#chains.delete(taskId);
    });
  }

  #serializer(wireVersion: string): PushNotificationSerializer {
    return wireVersion.startsWith("0.") ? this.#v03 : this.#v1;
  }

  async #post(
    taskId: string,
    config: TaskPushNotificationConfig,
    serializer: PushNotificationSerializer,
    response: StreamResponse,
    task: Task | undefined,
  ): Promise<void> {
    let result: EgressResult | { ok: false; reason: string };
    try {
      const { body, contentType } = serializer.serialize(response, task);
      result = await postWebhook({
        url: config.url,
        headers: { "content-type": contentType, ...authHeaders(config) },
        body: new TextEncoder().encode(body),
        policy: this.#o.policy,
      });
    } catch (error) {
      // A header the peer chose that is not a single line, a body that does not serialise.
      result = { ok: false, reason: error instanceof Error ? error.message : "the push could not be sent" };
    }
    if (!result.ok) this.#o.onFailure?.({ taskId, url: config.url, reason: result.reason });
  }
}
