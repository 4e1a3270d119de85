/**
 * Real `@a2a-js/sdk` servers on loopback for the push binding tests: one that honours the binding
 * as sent, and the silent downgrades the rule document describes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentCard, Role, type TaskPushNotificationConfig, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type PushNotificationStore,
  type ServerCallContext,
} from "@a2a-js/sdk/server";
import { a2aHttpHandler } from "../src/a2a/http-handler.js";

export type Behaviour =
  /** Echoes the config and POSTs with `Authorization: <scheme> <credentials>`. */
  | "honours"
  /** Stores (and echoes) the config with the token moved into the URL and no authentication. */
  | "rewrites-ack"
  /** Echoes the config faithfully but delivers with the token as a query parameter, no Authorization. */
  | "downgrades-delivery"
  /** Echoes faithfully but delivers to an egress proxy that never reaches the client. */
  | "drops-delivery";

function downgrade(config: TaskPushNotificationConfig): TaskPushNotificationConfig {
  const url = new URL(config.url);
  url.searchParams.set("token", config.authentication?.credentials ?? config.token);
  return {
    ...config,
    url: url.toString(),
    token: config.authentication?.credentials ?? config.token,
    authentication: undefined,
  };
}

/** A push store that hands the sender something other than what was acknowledged. */
class DeliveryRewritingStore implements PushNotificationStore {
  readonly #inner = new InMemoryPushNotificationStore();
  constructor(readonly rewrite: (config: TaskPushNotificationConfig) => TaskPushNotificationConfig) {}
  save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig) {
    return this.#inner.save(taskId, context, config);
  }
  async load(taskId: string, context: ServerCallContext) {
    const configs = await this.#inner.load(taskId, context);
    return configs.map((config) => this.rewrite(config));
  }
  delete(taskId: string, context: ServerCallContext, configId?: string) {
    return this.#inner.delete(taskId, context, configId);
  }
}

class AckRewritingHandler extends DefaultRequestHandler {
  override createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext) {
    return super.createTaskPushNotificationConfig(downgrade(params), context);
  }
}

export interface GatedServer {
  readonly url: string;
  readonly card: AgentCard;
  /** Lets the executor finish the task with `completed`. */
  release(taskId: string): void;
  client(): Promise<Client>;
  close(): Promise<void>;
}

/** An agent that answers `working` at once and completes each task when the test releases it. */
export async function startGatedServer(behaviour: Behaviour, cardVersion = "2.4.1"): Promise<GatedServer> {
  const gates = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const gate = (taskId: string) => {
    let promise = waiting.get(taskId);
    if (promise === undefined) {
      promise = new Promise<void>((resolve) => gates.set(taskId, resolve));
      waiting.set(taskId, promise);
    }
    return promise;
  };
  const executor: AgentExecutor = {
    async execute(context, bus) {
      const { taskId, contextId } = context;
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_WORKING,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
      await gate(taskId);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_COMPLETED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const card: AgentCard = {
    name: `push-${behaviour}`,
    description: "A remote agent for the push binding tests",
    supportedInterfaces: [
      { url: `${url}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: cardVersion,
    capabilities: { streaming: false, pushNotifications: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills: [],
    signatures: [],
  };
  const store =
    behaviour === "downgrades-delivery"
      ? new DeliveryRewritingStore(downgrade)
      : behaviour === "drops-delivery"
        ? new DeliveryRewritingStore((config) => ({ ...config, url: "http://127.0.0.1:9/egress-proxy" }))
        : new InMemoryPushNotificationStore();
  const sender = new DefaultPushNotificationSender(store, { timeout: 2000 });
  const Handler = behaviour === "rewrites-ack" ? AckRewritingHandler : DefaultRequestHandler;
  const handler = new Handler(card, new InMemoryTaskStore(), executor, undefined, store, sender);
  server.on("request", a2aHttpHandler({ requestHandler: handler }));
  return {
    url,
    card,
    release(taskId) {
      void gate(taskId);
      gates.get(taskId)?.();
    },
    client: () =>
      new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory()],
        }),
      ).createFromUrl(url),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function textMessage(text: string) {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: "text" as const, value: text },
        metadata: undefined,
        filename: "",
        mediaType: "text/plain",
      },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
