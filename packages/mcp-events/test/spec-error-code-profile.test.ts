// The error-code profile: by default SEP-3415's five general errors carry the numbers ChatGPT and
// the AI SDK use today (-32011..-32015); `errorCodes: "sep-3415"` gives the draft SEP's
// -32023..-32027. The sketch dialect keeps its own codes under either. Real servers on loopback.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, sep3415, sep3415Dialect } from "../src/index.js";
import { type Json, type Listening, RawSession, serveEvents } from "./harness.js";
import { modernRequest, serveFetch } from "./interop-harness.js";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function start(options: Parameters<typeof createEventsServer>[0] = {}) {
  const events = await createEventsServer({ limits: { perPrincipal: 1 }, ...options });
  events.event({ name: "ping.sent" });
  events.event({ name: "locked.door", authorize: () => false });
  events.event({ name: "pong.sent", delivery: { push: false } });
  const http: Listening = await serveEvents(events);
  open.push(async () => {
    await http.close();
    await events.close();
  });
  return { events, session: await RawSession.open(http.url) };
}

/** The four errors a server without webhook delivery can give, asked in SEP-3415 (`arguments`). */
async function sepCodes(session: RawSession): Promise<Record<string, unknown>> {
  const ask = async (id: number, method: string, params: Json) =>
    ((await session.request(id, method, { arguments: {}, cursor: null, ...params })).error as Json).code;
  await session.request(1, "events/poll", { name: "ping.sent", arguments: { first: true }, cursor: null });
  return {
    NotFound: await ask(2, "events/poll", { name: "no.such.event" }),
    Forbidden: await ask(3, "events/poll", { name: "locked.door" }),
    ResourceExhausted: await ask(4, "events/poll", { name: "ping.sent", arguments: { second: true } }),
    Unsupported: await ask(5, "events/stream", { name: "pong.sent" }),
  };
}

describe("the error-code profile", () => {
  it("by default: the deployed clients' -32011..-32014", async () => {
    const { session } = await start();
    expect(await sepCodes(session)).toEqual({
      NotFound: -32011,
      Forbidden: -32012,
      ResourceExhausted: -32013,
      Unsupported: -32014,
    });
  });

  it('errorCodes: "sep-3415": the draft SEP\'s -32023..-32026, with the same names and data', async () => {
    const { session } = await start({ errorCodes: "sep-3415" });
    expect(await sepCodes(session)).toEqual({
      NotFound: -32023,
      Forbidden: -32024,
      ResourceExhausted: -32025,
      Unsupported: -32026,
    });
    const { error } = await session.request(9, "events/poll", {
      name: "no.such.event",
      arguments: {},
      cursor: null,
    });
    expect(error).toEqual({
      code: -32023,
      message: "NotFound",
      data: { kind: "event", name: "no.such.event" },
    });
  });

  it("CallbackEndpointError is -32015 by default and -32027 in the sep-3415 profile", () => {
    expect(sep3415.error("InvalidCallbackUrl", { reason: "challenge_failed" })).toEqual({
      code: -32015,
      message: "CallbackEndpointError",
      data: { reason: "challenge_failed" },
    });
    expect(sep3415Dialect("sep-3415").error("InvalidCallbackUrl", { reason: "challenge_failed" })).toEqual({
      code: -32027,
      message: "CallbackEndpointError",
      data: { reason: "challenge_failed" },
    });
    // Either numbering is understood when decoding.
    expect(sep3415.errorName({ code: -32025 })).toBe("TooManySubscriptions");
    expect(sep3415Dialect("sep-3415").errorName({ code: -32013 })).toBe("TooManySubscriptions");
  });

  it("sketch requests keep the sketch's codes on a sep-3415-profile server", async () => {
    const { session } = await start({ errorCodes: "sep-3415" });
    const notFound = await session.request(1, "events/poll", {
      name: "no.such.event",
      params: {},
      cursor: null,
    });
    expect(notFound.error).toMatchObject({ code: -32011, message: "EventNotFound" });
    const unsupported = await session.request(2, "events/stream", { name: "pong.sent", params: {} });
    expect(unsupported.error).toMatchObject({ code: -32017, message: "DeliveryModeUnsupported" });
  });

  it("a 2026-07-28 request that names no dialect is answered in the profile's numbers", async () => {
    const events = await createEventsServer({ errorCodes: "sep-3415" });
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "profile", version: "1.0.0" });
      events.attach(server);
      return server;
    });
    const http = await serveFetch((request) => handler.fetch(request));
    open.push(async () => {
      await handler.close();
      await http.close();
      await events.close();
    });
    const { message } = await modernRequest(`${http.url}/mcp`, 1, "events/poll", { name: "no.such.event" });
    expect(message.error).toEqual({
      code: -32023,
      message: "NotFound",
      data: { kind: "event", name: "no.such.event" },
    });
  });

  it("an unknown profile is refused when the server is created", async () => {
    await expect(createEventsServer({ errorCodes: "draft" as never })).rejects.toThrow(
      /errorCodes must be "deployed" or "sep-3415"/,
    );
  });
});
