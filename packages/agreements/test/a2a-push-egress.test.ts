// A peer's push config never makes this agent POST where the egress policy refuses, nor on an
// unacknowledged binding. A real `@a2a-js/sdk` peer talks to an agent whose card advertises push:
// a config inside `message/send` (not even a signed agreement message) is ignored, as the push
// binding rule refuses an unacknowledged binding; `tasks/pushNotificationConfig/set` naming a
// loopback, private or metadata address is refused under the production policy; and the pushes
// that are sent go through the egress, so a name resolving to loopback is never reached either.
// Real HTTP on loopback; a hook server counts every request that reaches it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type StreamResponse, TaskState } from "@a2a-js/sdk";
import { InMemoryPushNotificationStore, ServerCallContext } from "@a2a-js/sdk/server";
import { closeEgress, developmentPolicy, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGREEMENTS_EXTENSION_URI } from "../src/a2a/agreement-card.js";
import { EgressPushSender, type PushFailure } from "../src/a2a/push-sender.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { type A2AAgent, EXTENSION, rawClient, startA2AAgent } from "./a2a-agents.js";
import { textMessage } from "./a2a-push-servers.js";
import { closedAfterEach, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, resolveKey } = await twoParties();
const running = closedAfterEach<A2AAgent>();
const sellerLimits: LimitsPolicy = { version: "s-1", types: ["quote"], maxTotal: { EUR: "500000" } };

interface Hit {
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}
const hits: Hit[] = [];
let hook: http.Server;
let hookUrl = "";
beforeAll(async () => {
  hook = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      hits.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => hook.close(() => resolve())));
beforeEach(() => {
  hits.length = 0;
});

const policies: EgressPolicy[] = [];
const kept = (policy: EgressPolicy) => {
  policies.push(policy);
  return policy;
};
afterAll(async () => {
  await Promise.all(policies.map((p) => closeEgress(p)));
});

const pushingAgent = async (pushPolicy?: EgressPolicy) => {
  const agent = await startA2AAgent({
    party: seller,
    policy: sellerLimits,
    respond: quoteDesks("100", (n) => n + 60),
    resolveKey,
    pushNotifications: true,
    ...(pushPolicy === undefined ? {} : { pushPolicy }),
  });
  running.push(agent);
  return agent;
};

/** `message/send` with a push config of the peer's choosing, as an unauthenticated peer sends it. */
const sendWithPush = async (agent: A2AAgent, url: string) => {
  const client = await rawClient(agent);
  const result = await client.sendMessage(
    {
      tenant: "",
      message: textMessage("not an agreement message"),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: "",
          id: "",
          taskId: "",
          url,
          token: "",
          authentication: { scheme: "Bearer", credentials: "chosen-by-the-peer" },
        },
        returnImmediately: false,
      },
      metadata: undefined,
    },
    EXTENSION,
  );
  if (!("status" in result)) throw new Error("the agent answered with a Message, not a task");
  return { client, task: result };
};

/** Long enough for the SDK's fire-and-forget pushes of the task's updates to have gone out. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

describe("A2A push configs from a peer, through the egress", () => {
  it("a push config inside message/send is never POSTed to, under the production policy", async () => {
    const agent = await pushingAgent();
    const { task } = await sendWithPush(agent, hookUrl);
    expect(task.status?.state).toBeDefined();
    await settle();
    expect(hits).toEqual([]);
  });

  it("nor under a development policy that allows loopback: an inline config is never acknowledged", async () => {
    const agent = await pushingAgent(kept(developmentPolicy()));
    await sendWithPush(agent, hookUrl);
    await settle();
    expect(hits).toEqual([]);
  });

  it("nor a v0.3 message/send with a pushNotificationConfig, under a development policy", async () => {
    const agent = await pushingAgent(kept(developmentPolicy()));
    const answer = await fetch(agent.cardUrl.replace("/.well-known/agent-card.json", "/a2a/jsonrpc"), {
      method: "POST",
      headers: { "content-type": "application/json", "x-a2a-extensions": AGREEMENTS_EXTENSION_URI },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: {
          message: {
            kind: "message",
            messageId: crypto.randomUUID(),
            role: "user",
            parts: [{ kind: "text", text: "not an agreement message" }],
          },
          configuration: {
            blocking: true,
            pushNotificationConfig: {
              url: hookUrl,
              authentication: { schemes: ["Bearer"], credentials: "chosen-by-the-peer" },
            },
          },
        },
      }),
    });
    const reply = await answer.json();
    expect(reply, JSON.stringify(reply)).toMatchObject({ result: { kind: "task" } });
    await settle();
    expect(hits).toEqual([]);
  });

  it.each([
    ["a loopback address", () => hookUrl],
    ["a private address", () => "https://10.0.0.5/hook"],
    ["the metadata address", () => "https://169.254.169.254/latest/meta-data/"],
    ["a metadata host name", () => "https://metadata.google.internal/computeMetadata/v1/"],
  ])(
    "tasks/pushNotificationConfig/set naming %s is refused under the production policy",
    async (_name, url) => {
      const agent = await pushingAgent();
      const { client, task } = await sendWithPush(agent, "https://hooks.peer.example/ignored");
      const refused = await client
        .createTaskPushNotificationConfig({
          tenant: "",
          id: "",
          taskId: task.id,
          url: url(),
          token: "",
          authentication: { scheme: "Bearer", credentials: "chosen-by-the-peer" },
        })
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
      expect(refused?.message).toContain("the push notification URL is refused");
      await settle();
      expect(hits).toEqual([]);
    },
  );
});

describe("the push sender", () => {
  const context = new ServerCallContext({ requestedVersion: "1.0" });
  const update = (taskId: string): StreamResponse => ({
    payload: {
      $case: "statusUpdate",
      value: {
        taskId,
        contextId: "c-1",
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      },
    },
  });
  const storeWith = async (taskId: string, url: string) => {
    const store = new InMemoryPushNotificationStore();
    await store.save(taskId, context, {
      tenant: "",
      id: "p-1",
      taskId,
      url,
      token: "",
      authentication: { scheme: "Bearer", credentials: "receiver-secret" },
    });
    return store;
  };

  it("posts the SDK's body and authentication through the egress where the policy allows", async () => {
    const store = await storeWith("t-1", hookUrl);
    const failures: PushFailure[] = [];
    const sender = new EgressPushSender({
      store,
      policy: kept(developmentPolicy()),
      onFailure: (f) => failures.push(f),
    });
    await sender.send(update("t-1"), context);
    expect(failures).toEqual([]);
    expect(hits).toHaveLength(1);
    expect(hits[0]?.headers.authorization).toBe("Bearer receiver-secret");
    expect(hits[0]?.headers["content-type"]).toBe("application/a2a+json");
    expect(JSON.parse(hits[0]?.body ?? "{}")).toMatchObject({ statusUpdate: { taskId: "t-1" } });
  });

  it("never reaches a name that resolves to loopback under the production policy", async () => {
    const port = Number(new URL(hookUrl).port);
    const policy = kept(
      productionPolicy({ port, resolver: async () => [{ address: "127.0.0.1", family: 4 }] }),
    );
    const store = await storeWith("t-2", `https://hooks.peer.example:${port}/hook`);
    const failures: PushFailure[] = [];
    await new EgressPushSender({ store, policy, onFailure: (f) => failures.push(f) }).send(
      update("t-2"),
      context,
    );
    expect(hits).toEqual([]);
    expect(failures).toEqual([
      {
        taskId: "t-2",
        url: `https://hooks.peer.example:${port}/hook`,
        reason: "the host name resolved to an address that is refused: it is a loopback address",
      },
    ]);
  });
});
