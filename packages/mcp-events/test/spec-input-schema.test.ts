// An event type whose inputSchema is plain JSON Schema (no zod `params`) enforces it: poll, push
// and webhook subscriptions with arguments that violate it are refused with InvalidParams
// (-32602), the message naming the field, on both wires, over a real server on loopback.
import { developmentPolicy, generateSecret } from "@doorbell/webhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createEventsServer, type EventsServer } from "../src/index.js";
import { type Json, type Listening, RawSession, serveEvents } from "./harness.js";

const FOLDER_SCHEMA = {
  type: "object",
  properties: {
    folder: { type: "string", minLength: 1 },
    depth: { type: "integer", minimum: 0 },
    pattern: { type: "object", properties: { glob: { type: "string" } }, additionalProperties: false },
  },
  required: ["folder"],
  additionalProperties: false,
};

let events: EventsServer;
let http: Listening;

afterEach(async () => {
  await http?.close();
  await events?.close();
});

async function start(): Promise<RawSession> {
  events = await createEventsServer({
    webhook: { policy: developmentPolicy(), allowAnonymous: true, verifyTimeoutMs: 500 },
  });
  // A check-function type and an emit-only one, both described by JSON Schema alone.
  events.event({
    name: "folder.changed",
    inputSchema: FOLDER_SCHEMA,
    check: (_ctx, _params, cursor) => ({ events: [], cursor: cursor ?? "0" }),
  });
  events.event({ name: "file.added", inputSchema: FOLDER_SCHEMA });
  http = await serveEvents(events);
  return RawSession.open(http.url);
}

const errorOf = (answer: Json) => answer.error as { code: number; message: string; data: { issues: Json[] } };

describe("a plain JSON Schema inputSchema is enforced", () => {
  it("poll (SEP-3415 wire): a wrong type is -32602 naming the field", async () => {
    const session = await start();
    const error = errorOf(
      await session.request(1, "events/poll", {
        name: "folder.changed",
        arguments: { folder: 3 },
        cursor: null,
      }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toBe("Invalid arguments for folder.changed: folder: must be string");
    expect(error.data.issues).toEqual([{ path: "folder", message: "must be string" }]);
  });

  it("poll: a missing required field, an unknown one and a nested one are each named", async () => {
    const session = await start();
    const missing = errorOf(
      await session.request(1, "events/poll", { name: "file.added", arguments: {}, cursor: null }),
    );
    expect(missing.message).toBe("Invalid arguments for file.added: folder: is required");
    const unknown = errorOf(
      await session.request(2, "events/poll", {
        name: "file.added",
        arguments: { folder: "/in", recursive: true },
        cursor: null,
      }),
    );
    expect(unknown.data.issues).toEqual([
      { path: "recursive", message: "is not a property the schema allows" },
    ]);
    const nested = errorOf(
      await session.request(3, "events/poll", {
        name: "file.added",
        arguments: { folder: "/in", depth: -1, pattern: { glob: 7, regex: "x" } },
        cursor: null,
      }),
    );
    expect(nested.data.issues).toEqual(
      expect.arrayContaining([
        { path: "depth", message: "must be >= 0" },
        { path: "pattern.glob", message: "must be string" },
        { path: "pattern.regex", message: "is not a property the schema allows" },
      ]),
    );
  });

  it("poll (sketch wire, `params`): refused the same way; conforming arguments are served", async () => {
    const session = await start();
    const refused = errorOf(
      await session.request(1, "events/poll", {
        name: "folder.changed",
        params: { folder: "" },
        cursor: null,
      }),
    );
    expect(refused.code).toBe(-32602);
    expect(refused.message).toBe(
      "Invalid arguments for folder.changed: folder: must NOT have fewer than 1 characters",
    );
    const served = await session.request(2, "events/poll", {
      name: "folder.changed",
      params: { folder: "/in", depth: 2, pattern: { glob: "*.pdf" } },
      cursor: null,
    });
    expect(served.error).toBeUndefined();
    expect(served.result).toMatchObject({ events: [], cursor: "0" });
  });

  it("events/stream is refused before it opens", async () => {
    const session = await start();
    const answer = await session.request(1, "events/stream", {
      name: "file.added",
      arguments: { folder: "/in", depth: "deep" },
      cursor: null,
    });
    expect(errorOf(answer)).toMatchObject({
      code: -32602,
      message: "Invalid arguments for file.added: depth: must be integer",
    });
    expect(events.liveSubscriptions).toBe(0);
  });

  it("events/subscribe (webhook) is refused before the callback is contacted", async () => {
    const session = await start();
    const answer = await session.request(1, "events/subscribe", {
      name: "folder.changed",
      arguments: { depth: 1 },
      delivery: { mode: "webhook", url: "http://127.0.0.1:9/hooks", secret: generateSecret() },
      cursor: null,
    });
    expect(errorOf(answer)).toMatchObject({
      code: -32602,
      message: "Invalid arguments for folder.changed: folder: is required",
    });
    expect(events.liveSubscriptions).toBe(0);
  });

  it("a schema the validator cannot compile is refused when the type is declared, naming it", async () => {
    events = await createEventsServer();
    expect(() =>
      events.event({
        name: "broken.schema",
        inputSchema: { $schema: "https://example.com/not-a-dialect", type: "object" },
      }),
    ).toThrow(/event type broken\.schema: its inputSchema cannot be compiled/);
    expect(() =>
      events.event({
        name: "broken.pattern",
        inputSchema: { type: "object", properties: { a: { type: "string", pattern: "(" } } },
      }),
    ).toThrow(/event type broken\.pattern/);
  });
});
