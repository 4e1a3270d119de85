/**
 * Agents on A2A over loopback for the agreement tests: each with its own SQLite inbox store, an
 * `@a2a-js/sdk` server (`attachA2A` + `a2aHttpHandler` on node:http) serving its agreement card,
 * and the real SDK client reaching the other side. `rawClient` is a bare SDK client with the
 * extension activated, for sending crafted (tampered) messages to a task.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Message as A2AMessage, Task } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { AGREEMENTS_EXTENSION_URI, agreementAgentCard } from "../src/a2a/agreement-card.js";
import { type A2AAgreements, attachA2A } from "../src/a2a/attach.js";
import { a2aHttpHandler } from "../src/a2a/http-handler.js";
import { AgentInbox, type Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import type { InboxStore } from "../src/inbox/store.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import { agentIdentity, openAgentStore } from "./agent-base.js";
import type { Party } from "./inbox-parties.js";

export interface A2AAgent {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  readonly a2a: A2AAgreements;
  /** The agent card address. */
  readonly cardUrl: string;
  readonly refused: string[];
  close(): Promise<void>;
}

export async function startA2AAgent(setup: {
  party: Party;
  policy: LimitsPolicy;
  respond: Responder;
  resolveKey: KeyResolver;
  clock?: () => number;
}): Promise<A2AAgent> {
  const base = { ...setup, clock: setup.clock ?? Date.now };
  const { handle, store } = await openAgentStore(base);
  const refused: string[] = [];
  const inbox = new AgentInbox({
    ...agentIdentity(base, store),
    onRefused: (_message, reason) => {
      refused.push(reason);
    },
  });
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const a2a = attachA2A({
    inbox,
    store,
    card: agreementAgentCard({
      name: `${setup.party.org} agent`,
      description: "Quotes and agreements (agent-intents/1)",
      url: `${origin}/a2a/jsonrpc`,
      version: "1.0.0",
    }),
    onRefused: (_thread, reason) => {
      refused.push(reason);
    },
  });
  server.on("request", a2aHttpHandler({ requestHandler: a2a.requestHandler }));
  return {
    inbox,
    store,
    a2a,
    cardUrl: `${origin}/.well-known/agent-card.json`,
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
