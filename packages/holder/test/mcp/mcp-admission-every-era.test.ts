// Admission holds in every era: a place taken by a tool call is held until the tool has answered,
// for a 2025-11-25 session's SSE answers as for a stateless 2026-07-28 call, and a batch takes one
// place per request. A whole holder on loopback serves one MCP request at a time with no waiting
// room (--mcp-concurrency 1 --mcp-queue 0); intent_search_offers runs the real catalogue search
// behind a door the test opens, so a call occupies its place for as long as the test says.
// Whatever ends a call (its answer, a tool failure, a client that went away or cancelled, a session
// closed under it), the place comes back once the tool is done, never before.
import { forEachEngine } from "@doorbell/store/testing";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HolderToolServices } from "../../src/mcp/tools.js";
import {
  INITIALIZE,
  MCP_HEADERS,
  octavia,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const SEARCH = { name: "intent_search_offers", arguments: { statement: "octavia" } };
const LEGACY_VERSION = "2025-11-25";

/** The catalogue search, held at a door while it is shut; `failing` makes it throw once let through. */
function searchDoor() {
  let shut = false;
  let failing = false;
  let started = 0;
  const waiting: (() => void)[] = [];
  return {
    wrap(services: HolderToolServices): HolderToolServices {
      return {
        ...services,
        offers: Object.assign(Object.create(services.offers), {
          async search(...args: Parameters<HolderToolServices["offers"]["search"]>) {
            started++;
            const fails = failing;
            if (shut) await new Promise<void>((resolve) => waiting.push(resolve));
            if (fails) throw new Error("the catalogue is unreadable");
            return services.offers.search(...args);
          },
        }),
      };
    },
    shut(options: { failing?: boolean } = {}) {
      shut = true;
      failing = options.failing ?? false;
    },
    open() {
      shut = false;
      failing = false;
      for (const resolve of waiting.splice(0)) resolve();
    },
    get started() {
      return started;
    },
    get held() {
      return waiting.length;
    },
  };
}

/** Every POST's status and Retry-After, as a client saw them. */
function recordingFetch() {
  const seen: { status: number; retryAfter: string | null }[] = [];
  const fetchRecorded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (init?.method === "POST")
      seen.push({ status: response.status, retryAfter: response.headers.get("retry-after") });
    return response;
  };
  return { seen, fetch: fetchRecorded };
}

/** One client of either SDK: a search call (that may be given up) and its session's end. */
interface Caller {
  search(signal?: AbortSignal): Promise<object>;
  close(): Promise<void>;
}

/** Whether a call's answer is a tool error. */
const failedCall = (answer: object): boolean => "isError" in answer && answer.isError === true;

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  const door = searchDoor();
  const opened: Caller[] = [];

  beforeAll(async () => {
    h = await startHolder(engine, {
      mcp: { admission: { concurrent: 1, waiting: 0 } },
      toolServices: door.wrap,
    });
    await h.services.offers.importCatalogue([octavia({ title: "Škoda Octavia Combi" })]);
  });
  afterEach(async () => {
    door.open();
    await Promise.allSettled(opened.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await h?.close();
  });

  const clients = {
    "SDK 1.x, 2025-11-25 session": async (fetchWith: typeof fetch = fetch) => {
      const client = new LegacyClient({ name: "legacy-agent", version: "1.0.0" });
      const transport = new LegacyTransport(h.mcpUrl, { fetch: fetchWith });
      await client.connect(transport);
      const caller = {
        search: (signal?: AbortSignal) =>
          client.callTool(SEARCH, undefined, signal === undefined ? {} : { signal }),
        close: () => client.close(),
        /** DELETE: the client ends its session. */
        terminate: () => transport.terminateSession(),
      };
      opened.push(caller);
      return caller;
    },
    // SDK v2 left at its default negotiation opens a 2025-11-25 session.
    "SDK v2, 2025-11-25 session": async (fetchWith: typeof fetch = fetch) => {
      const client = new Client({ name: "v2-legacy-agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(h.mcpUrl, { fetch: fetchWith }));
      const caller = {
        search: (signal?: AbortSignal) => client.callTool(SEARCH, signal === undefined ? {} : { signal }),
        close: () => client.close(),
      };
      opened.push(caller);
      return caller;
    },
    "SDK v2, 2026-07-28 stateless": async (fetchWith: typeof fetch = fetch) => {
      const client = new Client(
        { name: "v2-agent", version: "1.0.0" },
        { versionNegotiation: { mode: "auto" } },
      );
      await client.connect(new StreamableHTTPClientTransport(h.mcpUrl, { fetch: fetchWith }));
      const caller = {
        search: (signal?: AbortSignal) => client.callTool(SEARCH, signal === undefined ? {} : { signal }),
        close: () => client.close(),
      };
      opened.push(caller);
      return caller;
    },
  };
  const sessions = ["SDK 1.x, 2025-11-25 session", "SDK v2, 2025-11-25 session"] as const;

  /** The place is taken: another call is refused with 503, and the door holds one search. */
  async function expectPlaceTaken(): Promise<void> {
    expect(h.mcp.admission.active).toBe(1);
    const probe = await rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(probe.status).toBe(503);
  }

  /** The place is back: nothing is served, and a fresh call is answered. */
  async function expectPlaceBack(client: Caller): Promise<void> {
    await until(() => h.mcp.admission.active === 0);
    expect(failedCall(await client.search())).toBe(false);
    expect(h.mcp.admission.active).toBe(0);
  }

  it.each(sessions)(
    "%s: of 20 concurrent calls one is served and 19 are refused with 503 and Retry-After; then the place is back",
    async (kind) => {
      const recorded = recordingFetch();
      const client = await clients[kind](recorded.fetch);
      recorded.seen.splice(0);
      door.shut();
      const calls = Array.from({ length: 20 }, () => client.search());
      const outcomes: ("served" | "refused")[] = [];
      const refusals: string[] = [];
      for (const call of calls) {
        call.then(
          () => outcomes.push("served"),
          (error: Error) => {
            outcomes.push("refused");
            refusals.push(error.message);
          },
        );
      }
      await until(() => outcomes.length === 19);
      expect(outcomes).toEqual(Array(19).fill("refused"));
      expect(door.started).toBeGreaterThan(0);
      expect(door.held).toBe(1); // the one served call is still searching
      expect(h.mcp.admission.refused).toBeGreaterThanOrEqual(19);
      for (const message of refusals) expect(message).toContain("the holder is busy; retry in a second");
      const refusedPosts = recorded.seen.filter((post) => post.status === 503);
      expect(refusedPosts).toHaveLength(19);
      for (const post of refusedPosts) expect(post.retryAfter).toBe("1");

      door.open();
      await until(() => outcomes.length === 20);
      expect(outcomes.filter((outcome) => outcome === "served")).toHaveLength(1);
      await expectPlaceBack(client);
    },
  );

  it("a batch of 100 calls in a session is refused whole, saying how many fit; nothing runs and the place stays free", async () => {
    const opening = await rawRequest(h.mcpUrl, {
      headers: MCP_HEADERS,
      body: JSON.stringify({
        ...INITIALIZE,
        params: { ...INITIALIZE.params, protocolVersion: LEGACY_VERSION },
      }),
    });
    const sessionId = opening.headers["mcp-session-id"] as string;
    const headers = { ...MCP_HEADERS, "mcp-session-id": sessionId, "mcp-protocol-version": LEGACY_VERSION };
    await rawRequest(h.mcpUrl, {
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    const startedBefore = door.started;
    const batch = Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: SEARCH,
    }));
    const refusedBatch = await rawRequest(h.mcpUrl, { headers, body: JSON.stringify(batch) });
    expect(refusedBatch.status).toBe(400);
    expect(JSON.parse(refusedBatch.body)).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message:
          "Invalid Request: this batch holds 100 requests, but the holder serves at most 1 at once; send at most 1 in one batch",
      },
    });
    expect(door.started).toBe(startedBefore);
    expect(h.mcp.admission.active).toBe(0);

    // A batch that fits is served, and its place comes back.
    const served = await rawRequest(h.mcpUrl, { headers, body: JSON.stringify(batch.slice(0, 1)) });
    expect(served.status).toBe(200);
    expect(served.body).toContain("Škoda Octavia Combi");
    expect(h.mcp.admission.active).toBe(0);
  });

  it.each(Object.keys(clients) as (keyof typeof clients)[])(
    "%s: a call whose client gave up keeps its place until its tool answers, then gives it back",
    async (kind) => {
      const client = await clients[kind]();
      door.shut();
      const giveUp = new AbortController();
      const call = client.search(giveUp.signal);
      await until(() => door.held === 1);
      giveUp.abort();
      await expect(call).rejects.toThrow();
      await expectPlaceTaken();
      door.open();
      await expectPlaceBack(client);
    },
  );

  it.each(sessions)("%s: a call whose tool fails gives its place back once it failed", async (kind) => {
    const client = await clients[kind]();
    door.shut({ failing: true });
    const call = client.search();
    await until(() => door.held === 1);
    await expectPlaceTaken();
    door.open();
    const failed = await call;
    expect(failedCall(failed)).toBe(true);
    expect(JSON.stringify(failed)).toContain("ERR_HOLDER_INTERNAL");
    await expectPlaceBack(client);
  });

  it("a session closed while its call runs keeps the place until the call answers, then gives it back", async () => {
    const closing = await clients["SDK 1.x, 2025-11-25 session"]();
    door.shut();
    const call = closing.search();
    call.catch(() => {});
    await until(() => door.held === 1);
    await closing.terminate();
    await expectPlaceTaken();
    door.open();
    await until(() => h.mcp.admission.active === 0);
    await expectPlaceBack(await clients["SDK 1.x, 2025-11-25 session"]());
  });
});
