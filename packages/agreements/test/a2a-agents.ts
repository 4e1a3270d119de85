/**
 * Agents on A2A over loopback for the agreement tests: each with its own SQLite inbox store, an
 * `@a2a-js/sdk` server (`attachA2A` + `a2aHttpHandler` on node:http) serving its agreement card,
 * and the real SDK client reaching the other side. `rawClient` is a bare SDK client with the
 * extension activated, for sending crafted (tampered) messages to a task.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Message as A2AMessage, AgentCard, Task } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import type { Database } from "@doorbell/store";
import { developmentPolicy, type EgressPolicy } from "@doorbell/webhooks";
import { AGREEMENTS_EXTENSION_URI, agreementAgentCard } from "../src/a2a/agreement-card.js";
import { type A2AAgreements, attachA2A } from "../src/a2a/attach.js";
import { a2aHttpHandler } from "../src/a2a/http-handler.js";
import type { PeerDiscoveryOptions } from "../src/a2a/peer-discovery.js";
import { createSqlTaskStore } from "../src/a2a/sql-task-store.js";
import { AgentInbox, type Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import type { InboxStore } from "../src/inbox/store.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import { agentIdentity, openAgentStore, reopenAgentStore } from "./agent-base.js";
import type { Party } from "./inbox-parties.js";

/** Every agent here is on loopback: cards are fetched under the development egress policy. */
export const LOOPBACK_POLICY = developmentPolicy();

export interface A2AAgent {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  readonly a2a: A2AAgreements;
  /** The agent card address. */
  readonly cardUrl: string;
  readonly port: number;
  readonly refused: string[];
  close(): Promise<void>;
}

/**
 * Which server carries the agent: ours (`a2aHttpHandler`, both versions on one endpoint), or the
 * SDK's own Express handlers as a v1.0-only server or as a v0.3-only one (its compatibility layer,
 * with a card whose only interface is 0.3).
 */
export type A2AServerKind = "doorbell" | "sdk-1.0" | "sdk-0.3";

/** JSON-RPC method names one agent's client put on the wire, in order. */
export function recordingFetch(): { fetchImpl: typeof fetch; methods: string[] } {
  const methods: string[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") {
      const method = (JSON.parse(init.body) as { method?: unknown }).method;
      if (typeof method === "string") methods.push(method);
    }
    return fetch(input, init);
  };
  return { fetchImpl, methods };
}

async function sdkServer(kind: "sdk-1.0" | "sdk-0.3", a2a: A2AAgreements): Promise<http.RequestListener> {
  const expressModule = "express"; // no type declarations installed; only its call is used
  const { default: express } = (await import(expressModule)) as {
    default: () => { use(path: string, handler: unknown): void };
  };
  const { agentCardHandler, jsonRpcHandler } = await import("@a2a-js/sdk/server/express");
  const { UserBuilder } = await import("@a2a-js/sdk/server/express");
  const legacyCompat = { enabled: kind === "sdk-0.3" };
  const app = express();
  app.use(
    "/.well-known/agent-card.json",
    agentCardHandler({ agentCardProvider: a2a.requestHandler, legacyCompat, cache: { maxAge: 0 } }),
  );
  app.use(
    "/a2a/jsonrpc",
    jsonRpcHandler({
      requestHandler: a2a.requestHandler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat,
    }),
  );
  return app as unknown as http.RequestListener;
}

export async function startA2AAgent(setup: {
  party: Party;
  policy: LimitsPolicy;
  respond: Responder;
  resolveKey: KeyResolver;
  clock?: () => number;
  server?: A2AServerKind;
  discovery?: PeerDiscoveryOptions;
  /**
   * A database to keep everything in (threads and A2A tasks), opened by the caller; closed with
   * the agent. Default an in-memory SQLite with tasks in memory.
   */
  database?: Database;
  /** Listen on this port (an agent restarted where its peers know it). Default any. */
  port?: number;
  /** Whether the card advertises push notifications. Default false. */
  pushNotifications?: boolean;
  /** Where pushes may go (`attachA2A`'s default: production). */
  pushPolicy?: EgressPolicy;
}): Promise<A2AAgent> {
  const base = { ...setup, clock: setup.clock ?? Date.now };
  const { handle, store } =
    setup.database === undefined ? await openAgentStore(base) : await reopenAgentStore(base, setup.database);
  const refused: string[] = [];
  const inbox = new AgentInbox({
    ...agentIdentity(base, store),
    onRefused: (_message, reason) => {
      refused.push(reason);
    },
  });
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(setup.port ?? 0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kind = setup.server ?? "doorbell";
  const card: AgentCard = agreementAgentCard({
    name: `${setup.party.org} agent`,
    description: "Quotes and agreements (agent-intents/1)",
    url: `${origin}/a2a/jsonrpc`,
    version: "1.0.0",
    ...(setup.pushNotifications === undefined ? {} : { pushNotifications: setup.pushNotifications }),
  });
  if (kind !== "doorbell") {
    const version = kind === "sdk-1.0" ? "1.0" : "0.3";
    card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === version);
  }
  const a2a = attachA2A({
    inbox,
    store,
    card,
    ...(setup.database === undefined ? {} : { taskStore: createSqlTaskStore(setup.database) }),
    onRefused: (_thread, reason) => {
      refused.push(reason);
    },
    discovery: { policy: LOOPBACK_POLICY, ...setup.discovery },
    ...(setup.pushPolicy === undefined ? {} : { pushPolicy: setup.pushPolicy }),
  });
  server.on(
    "request",
    kind === "doorbell" ? a2aHttpHandler({ requestHandler: a2a.requestHandler }) : await sdkServer(kind, a2a),
  );
  return {
    inbox,
    store,
    a2a,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    port: (server.address() as AddressInfo).port,
    refused,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handle.close();
    },
  };
}

export const EXTENSION = {
  serviceParameters: ServiceParameters.createFrom(undefined, withA2AExtensions(AGREEMENTS_EXTENSION_URI)),
};

/** A bare `@a2a-js/sdk` client of an agent, to send what our inbox would never send. */
export async function rawClient(agent: A2AAgent): Promise<Client> {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory()],
    }),
  ).createFromUrl(agent.cardUrl, "");
}

export async function sendRaw(client: Client, message: A2AMessage): Promise<Task> {
  const result = await client.sendMessage(
    {
      tenant: "",
      message,
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    },
    EXTENSION,
  );
  if (!("status" in result)) throw new Error("the agent answered with a Message, not a task");
  return result;
}

/** The status text of a task, when its status message is a text part. */
export function statusText(task: Task | undefined): string | undefined {
  const content = task?.status?.message?.parts[0]?.content;
  return content?.$case === "text" ? content.value : undefined;
}
