// The legacy session table's bounds hold while many initializes run at once. Making room and
// taking the place are one synchronous step, so concurrent initializes cannot each see the same
// free place (an earlier version let a flood end with 301 sessions in a table of 300).
import { afterEach, describe, expect, it } from "vitest";
import { createMcpEndpoint, type McpEndpoint } from "../src/endpoint.js";

const PUBLIC_URL = "http://127.0.0.1:9";
const VERSION = "2025-11-25";
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("a legacy session table of 10, at most 4 per client", () => {
  let endpoint: McpEndpoint<undefined> | undefined;
  afterEach(async () => endpoint?.close());

  function start(): McpEndpoint<undefined> {
    endpoint = createMcpEndpoint<undefined>({
      publicUrl: PUBLIC_URL,
      name: "bound-test",
      version: "1.0.0",
      instructions: "test",
      role: "holder",
      toolRateLimit: false,
      sessionRateLimit: false,
      maxSessions: 10,
      maxSessionsPerClient: 4,
      admission: { concurrent: 200, waiting: 200 },
      register: () => undefined,
    });
    return endpoint;
  }

  const initialize = (ep: McpEndpoint<undefined>, clientKey: string) =>
    ep(
      new Request(`${PUBLIC_URL}/mcp`, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: VERSION,
            capabilities: {},
            clientInfo: { name: clientKey, version: "1" },
          },
        }),
      }),
      { clientKey },
    );

  /** The open sessions per client, by the name each client gave in its initialize. */
  const sessionsPerClient = (ep: McpEndpoint<undefined>) => {
    const counts = new Map<string, number>();
    for (const session of ep.sessions()) {
      const name = String(session.server.server.getClientVersion()?.name);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return counts;
  };

  it("60 initializes at once from 12 clients: never more than 10 sessions, nor 4 of one client", async () => {
    const ep = start();
    let most = 0;
    const answers = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const answer = await initialize(ep, `client-${i % 12}`);
        most = Math.max(most, ep.sessionCount);
        await answer.text();
        return answer.status;
      }),
    );
    expect(answers.every((status) => status === 200 || status === 503)).toBe(true);
    expect(answers.filter((status) => status === 200).length).toBeGreaterThanOrEqual(10);
    expect(most).toBeLessThanOrEqual(10);
    expect(ep.sessionCount).toBeLessThanOrEqual(10);
    for (const [key, count] of sessionsPerClient(ep)) {
      expect(count, key).toBeLessThanOrEqual(4);
    }
  });

  it("30 initializes at once from one client leave at most 4 of its sessions; the refused are told why", async () => {
    const ep = start();
    const answers = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const answer = await initialize(ep, "one-client");
        return {
          status: answer.status,
          body: await answer.text(),
          retryAfter: answer.headers.get("retry-after"),
        };
      }),
    );
    expect(answers.every(({ status }) => status === 200 || status === 503)).toBe(true);
    expect(ep.sessionCount).toBeGreaterThan(0);
    expect(ep.sessionCount).toBeLessThanOrEqual(4);
    for (const refused of answers.filter(({ status }) => status === 503)) {
      expect(refused.retryAfter).toBe("1");
      expect(JSON.parse(refused.body).error.message).toBe(
        "too many sessions are being opened at once; try again in 1 s",
      );
    }
  });
});
