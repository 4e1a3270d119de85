import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMcpSigner,
  createReceiver,
  createStandardSigner,
  generateSecret,
  type ReceivedWebhook,
  toNodeHandler,
} from "../src/index.js";

const secret = generateSecret();
const signer = createStandardSigner({ secrets: [secret] });
const received: ReceivedWebhook[] = [];
const receiver = createReceiver({
  keys: { secrets: [secret] },
  maxBodyBytes: 1024,
  handler: (event) => {
    received.push(event);
  },
});
const now = () => Math.floor(Date.now() / 1000);
const signed = (id: string, body: string | Uint8Array) => signer.headers({ id, timestamp: now(), body });

describe("receiver: bad input is refused precisely", () => {
  it("405 for anything but POST", async () => {
    const response = await receiver(new Request("http://a.test/", { method: "GET" }));
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("413 for a declared oversized body, before reading it", async () => {
    const body = "x".repeat(2048);
    const response = await receiver(
      new Request("http://a.test/", { method: "POST", headers: signed("m1", body), body }),
    );
    expect(response.status).toBe(413);
  });

  it("413 for a streamed oversized body without content-length", async () => {
    const chunk = new Uint8Array(600);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const request = new Request("http://a.test/", {
      method: "POST",
      headers: signed("m2", "x"),
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect((await receiver(request)).status).toBe(413);
  });

  it("400 for a verified body that is not JSON, and the handler does not run", async () => {
    const before = received.length;
    const body = new Uint8Array([0xff, 0xfe]);
    const response = await receiver(
      new Request("http://a.test/", { method: "POST", headers: signed("m3", body), body }),
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("ERR_WEBHOOK_INVALID_BODY");
    expect(received.length).toBe(before);
  });

  it("400 with the header's name when a header is missing", async () => {
    const response = await receiver(new Request("http://a.test/", { method: "POST", body: "{}" }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "ERR_WEBHOOK_MISSING_HEADER",
      message: "the webhook-id header is missing",
    });
  });
});

describe("receiver: endpoint challenges are answered only after the signature verifies", () => {
  const push = JSON.stringify({
    specVersion: "0.4",
    type: "subscription.verification",
    timestamp: "2026-10-27T14:00:00Z",
    data: { subscriptionId: "sub_Vq8nR3kX0bT5wLz2Hc7Ym4Pd", challenge: "c2Vjb25kLWNoYWxsZW5nZS0xMjgtYml0cw" },
  });

  it("echoes the push profile challenge", async () => {
    const response = await receiver(
      new Request("http://a.test/", { method: "POST", headers: signed("v1", push), body: push }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: "c2Vjb25kLWNoYWxsZW5nZS0xMjgtYml0cw" });
  });

  it("does not echo an unsigned challenge", async () => {
    const headers = { ...signed("v2", push), "webhook-signature": signed("v2", "{}")["webhook-signature"] };
    const response = await receiver(new Request("http://a.test/", { method: "POST", headers, body: push }));
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain("c2Vjb25k");
  });

  it("echoes the MCP Events challenge on an X-MCP receiver, and refuses when told to", async () => {
    const mcpSecret = generateSecret();
    let accept = true;
    const mcpReceiver = createReceiver({
      scheme: "mcp",
      keys: (_request, hint) => (hint.subscriptionId === "sub-1" ? { secrets: [mcpSecret] } : "gone"),
      handler: () => {},
      onChallenge: (challenge) => accept && challenge.kind === "mcp-events",
    });
    const body = JSON.stringify({ type: "verification", id: "sub-1", challenge: "9f86d081884c7d65" });
    const headers = () =>
      createMcpSigner(mcpSecret).headers({ subscriptionId: "sub-1", timestamp: now(), body });
    const ok = await mcpReceiver(new Request("http://a.test/", { method: "POST", headers: headers(), body }));
    expect(await ok.json()).toEqual({ challenge: "9f86d081884c7d65" });
    accept = false;
    expect(
      (await mcpReceiver(new Request("http://a.test/", { method: "POST", headers: headers(), body }))).status,
    ).toBe(403);
    const gone = createMcpSigner(mcpSecret).headers({ subscriptionId: "sub-2", timestamp: now(), body });
    expect(
      (await mcpReceiver(new Request("http://a.test/", { method: "POST", headers: gone, body }))).status,
    ).toBe(410);
  });
});

describe("receiver: MCP Events deliveries are deduplicated by eventId", () => {
  it("runs once per (subscription, eventId) across retries with new timestamps", async () => {
    const mcpSecret = generateSecret();
    const events: string[] = [];
    const mcpReceiver = createReceiver({
      scheme: "mcp",
      keys: { secrets: [mcpSecret] },
      handler: (event) => {
        events.push(event.id);
      },
    });
    const body = JSON.stringify({ id: "sub-1", eventId: "evt_789", name: "incident.created", data: {} });
    for (const skew of [0, 1]) {
      const headers = createMcpSigner(mcpSecret).headers({
        subscriptionId: "sub-1",
        timestamp: now() - skew,
        body,
      });
      expect(
        (await mcpReceiver(new Request("http://a.test/", { method: "POST", headers, body }))).status,
      ).toBe(200);
    }
    expect(events).toEqual(["sub-1:evt_789"]);
  });
});

describe("receiver over node:http on loopback", () => {
  let url = "";
  const server = createServer(toNodeHandler(receiver, { maxBodyBytes: 1024 }));
  beforeAll(async () => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("delivers a signed webhook to the handler with the exact bytes", async () => {
    const body = '{"type":"intent.status.changed","data":{"x":"ünïcode"}}';
    const response = await fetch(url, { method: "POST", headers: signed("msg_node", body), body });
    expect(response.status).toBe(200);
    const event = received.find((e) => e.id === "msg_node");
    expect(Buffer.from(event?.body ?? []).toString("utf8")).toBe(body);
  });

  it("answers 413 to a large body and closes the connection", async () => {
    const body = "x".repeat(1_000_000);
    const response = await fetch(url, { method: "POST", headers: signed("msg_big", body), body });
    expect(response.status).toBe(413);
    expect(response.headers.get("connection")).toBe("close");
  });

  it("answers 400 for duplicate id headers sent on the wire", async () => {
    const body = "{}";
    const headers = new Headers(signed("msg_dup", body));
    headers.append("webhook-id", "msg_other");
    const response = await fetch(url, { method: "POST", headers, body });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("ERR_WEBHOOK_DUPLICATE_HEADER");
  });
});
