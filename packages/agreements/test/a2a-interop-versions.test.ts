// A2A peers as they are (issue 18): our endpoint answers @a2a-js/sdk clients speaking v0.3
// (message/send, tasks/get, tasks/cancel) and v1.0 (SendMessage, GetTask, CancelTask); our client
// reads the peer's card and speaks the version it declares, against the SDK's own Express servers
// as a v1.0-only server and as a v0.3-only one; the card is found from the recipient's domain, and
// A2A is chosen only when the card declares the profile. Everything on loopback, real HTTP.
//
// What "v0.3" means here: the installed SDK is @a2a-js/sdk 1.3.0, whose v0.3 wire comes from its
// compatibility layer (LegacyJsonRpcTransport as the client, legacyCompat handlers as the server).
// No 0.3.x release of the SDK is installed, so no test runs the 0.3.x code itself.
import { type AgentCard, Role, TaskState } from "@a2a-js/sdk";
import { Client, ServiceParameters, withA2AExtensions } from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport, parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { describe, expect, it } from "vitest";
import { AGREEMENTS_EXTENSION_URI } from "../src/a2a/agreement-card.js";
import { toA2AMessage } from "../src/a2a/message-part.js";
import { chooseChannel } from "../src/a2a/peer-discovery.js";
import type { Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { signMessage } from "../src/jws/sign.js";
import {
  type A2AAgent,
  type A2AServerKind,
  LOOPBACK_POLICY,
  recordingFetch,
  startA2AAgent,
} from "./a2a-agents.js";
import { serveJson } from "./card-server.js";
import { askQuote } from "./inbox-parties.js";
import { ASK, acceptQuotes, closedAfterEach, quoteDesks, twoParties } from "./quote-thread.js";

const { seller, buyer, resolveKey } = await twoParties();
const running = closedAfterEach<A2AAgent>();

const sellerLimits: LimitsPolicy = { version: "s-3", types: ["quote"], maxTotal: { EUR: "500000" } };
const buyerLimits: LimitsPolicy = {
  version: "b-7",
  types: ["ask_quote", "accept"],
  maxTotal: { EUR: "1000000" },
};
const waitForThePerson: Responder = async () => undefined;

const sellerOn = async (
  server: A2AServerKind,
  respond: Responder = quoteDesks("45000", (now) => now + 3600),
) => {
  const agent = await startA2AAgent({ party: seller, policy: sellerLimits, respond, resolveKey, server });
  running.push(agent);
  return agent;
};

/** A signed ask_quote from the buyer as the one DataPart of an A2A message, in the v1.0 model. */
const signedAsk = async () => {
  const signed = await signMessage(askQuote(buyer, seller, Math.floor(Date.now() / 1000)), buyer.key, {
    jku: buyer.jku,
  });
  const message = toA2AMessage({ message: signed.parsed.message, jws: signed.jws }, { role: "user" });
  return { message, thread: signed.parsed.message.thread };
};

const send = (message: Awaited<ReturnType<typeof signedAsk>>["message"]) => ({
  tenant: "",
  message,
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined,
});

describe("our A2A endpoint, as the SDK's clients of both versions see it", () => {
  it("serves a v0.3 client: the card in the v0.3 shape, then message/send, tasks/get and tasks/cancel", async () => {
    const s = await sellerOn("doorbell", waitForThePerson);
    // A v0.3 client asks for the card without an A2A-Version header.
    const raw = (await (await fetch(s.cardUrl)).json()) as Record<string, unknown>;
    expect(raw).toMatchObject({ protocolVersion: "0.3.0", preferredTransport: "JSONRPC" });
    expect(raw.url).toMatch(/\/a2a\/jsonrpc$/);
    expect((raw.capabilities as { extensions: { uri: string }[] }).extensions[0]?.uri).toBe(
      AGREEMENTS_EXTENSION_URI,
    );
    const { fetchImpl, methods } = recordingFetch();
    const card: AgentCard = parseLegacyAgentCard(raw);
    const client = new Client(new LegacyJsonRpcTransport({ endpoint: raw.url as string, fetchImpl }), card);
    // A v0.3 client activates the extension with X-A2A-Extensions.
    const legacyExtension = { serviceParameters: { "X-A2A-Extensions": AGREEMENTS_EXTENSION_URI } };

    const { message, thread } = await signedAsk();
    const sent = await client.sendMessage(send(message), legacyExtension);
    expect("status" in sent && sent.contextId).toBe(thread);
    const taskId = "id" in sent ? sent.id : "";
    // The seller's agent waits for its person: the thread's task is working, not refused.
    expect("status" in sent && sent.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const got = await client.getTask({ tenant: "", id: taskId }, legacyExtension);
    expect(got.contextId).toBe(thread);
    expect(got.history.some((m) => m.role === Role.ROLE_USER)).toBe(true);
    const canceled = await client.cancelTask(
      { tenant: "", id: taskId, metadata: undefined },
      legacyExtension,
    );
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(methods).toEqual(["message/send", "tasks/get", "tasks/cancel"]);
  });

  it("serves a v1.0 client on the same endpoint: SendMessage, GetTask and CancelTask", async () => {
    const s = await sellerOn("doorbell", waitForThePerson);
    const { fetchImpl, methods } = recordingFetch();
    const { connectToPeer } = await import("../src/a2a/peer-discovery.js");
    const { client, card } = await connectToPeer(s.cardUrl, { fetchImpl, policy: LOOPBACK_POLICY });
    expect(card.supportedInterfaces[0]?.protocolVersion).toBe("1.0");
    const extension = {
      serviceParameters: ServiceParameters.createFrom(undefined, withA2AExtensions(AGREEMENTS_EXTENSION_URI)),
    };
    const { message, thread } = await signedAsk();
    const sent = await client.sendMessage(send(message), extension);
    expect("status" in sent && sent.contextId).toBe(thread);
    const taskId = "id" in sent ? sent.id : "";
    expect((await client.getTask({ tenant: "", id: taskId }, extension)).contextId).toBe(thread);
    const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined }, extension);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(methods).toEqual(["SendMessage", "GetTask", "CancelTask"]);
  });

  it("refuses a v0.3 client that does not activate the required extension, in the v0.3 error shape", async () => {
    const s = await sellerOn("doorbell");
    const raw = (await (await fetch(s.cardUrl)).json()) as { url: string };
    const { message } = await signedAsk();
    const response = await fetch(raw.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "message/send",
        params: {
          message: {
            kind: "message",
            messageId: message.messageId,
            role: "user",
            parts: [{ kind: "data", data: {} }],
          },
        },
      }),
    });
    const body = (await response.json()) as { id: number; error?: { code: number } };
    expect(body.id).toBe(7);
    expect(body.error?.code).toBe(-32008);
  });
});

describe("our client against the SDK's servers of both versions", () => {
  it.each([
    ["sdk-1.0", ["SendMessage"]],
    ["sdk-0.3", ["message/send"]],
  ] as const)(
    "agrees a quote with an agent on the SDK's %s server, in the version its card declares",
    async (server, wire) => {
      const s = await sellerOn(server);
      const { fetchImpl, methods } = recordingFetch();
      const b = await startA2AAgent({
        party: buyer,
        policy: buyerLimits,
        respond: acceptQuotes,
        resolveKey,
        discovery: { fetchImpl },
      });
      running.push(b);
      const sent = await b.a2a.remote.start(ASK, seller.address, s.cardUrl);
      const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
      expect(await b.store.threadState(buyer.address, thread)).toEqual({ state: "agreed", channel: "a2a" });
      expect(await s.store.threadState(seller.address, thread)).toEqual({ state: "agreed", channel: "a2a" });
      expect(b.a2a.remote.task(thread)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(new Set(methods)).toEqual(new Set(wire));
    },
  );
});

describe("finding the other side", () => {
  it("finds the card at the recipient's domain and chooses A2A when it declares the profile", async () => {
    const s = await sellerOn("doorbell");
    const origin = new URL(s.cardUrl).origin;
    const cardUrlOf = (domain: string) =>
      domain === seller.domain ? `${origin}/.well-known/agent-card.json` : "";
    const choice = await chooseChannel(seller.address, { cardUrlOf, policy: LOOPBACK_POLICY });
    expect(choice).toMatchObject({ channel: "a2a", cardUrl: s.cardUrl });

    const b = await startA2AAgent({
      party: buyer,
      policy: buyerLimits,
      respond: acceptQuotes,
      resolveKey,
      discovery: { cardUrlOf },
    });
    running.push(b);
    // No card address given: the buyer looks at the seller's domain.
    const sent = await b.a2a.remote.start(ASK, seller.address);
    const thread = sent !== undefined && "message" in sent ? sent.message.thread : "";
    expect(await b.store.threadState(buyer.address, thread)).toEqual({ state: "agreed", channel: "a2a" });
  });

  it("uses from.card when an earlier message named it", async () => {
    const s = await sellerOn("doorbell");
    const choice = await chooseChannel(seller.address, {
      policy: LOOPBACK_POLICY,
      fromCard: s.cardUrl,
      cardUrlOf: () => "http://127.0.0.1:9/.well-known/agent-card.json",
    });
    expect(choice).toMatchObject({ channel: "a2a", cardUrl: s.cardUrl });
  });

  it("chooses e-mail when the domain has no card, or a card without the profile", async () => {
    const none = await chooseChannel(seller.address, {
      policy: LOOPBACK_POLICY,
      cardUrlOf: () => "http://127.0.0.1:9/.well-known/agent-card.json",
    });
    expect(none).toMatchObject({ channel: "email" });
    expect(none.channel === "email" && none.reason).toMatch(
      /^the agent card at http:\/\/127\.0\.0\.1:9\/\.well-known\/agent-card\.json could not be fetched: the endpoint refused the connection$/,
    );

    const s = await sellerOn("doorbell");
    const plain = await fetch(s.cardUrl, { headers: { "A2A-Version": "1.0" } }).then((r) => r.json());
    const other = {
      ...(plain as AgentCard),
      capabilities: { ...(plain as AgentCard).capabilities, extensions: [] },
    };
    const served = await serveJson(other);
    const without = await chooseChannel(seller.address, {
      policy: LOOPBACK_POLICY,
      cardUrlOf: () => served.url,
    });
    await served.close();
    expect(without).toMatchObject({ channel: "email" });
    expect(without.channel === "email" && without.reason).toMatch(/does not declare agent-intents\/1/);
  });
});
