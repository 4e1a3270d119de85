// DESIGN.md's caveat: an SDK client on one long-lived Streamable HTTP session used to warn
// MaxListenersExceededWarning after ~1,500 calls. The cause is Node 20's fetch (undici) adding an
// abort listener to the session-wide signal for every request until garbage collection;
// scopedSignalFetch gives each request its own signal. 5,000 calls on one session: no warning,
// the session's signal keeps at most its own listeners, and the server keeps one session.
import { getEventListeners } from "node:events";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { forEachEngine } from "@doorbell/store/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeIntent, startHolder, type TestHolder } from "../support/mcp-harness.js";

const CALLS = 5_000;

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => {
    warnings.push(warning);
  };

  beforeAll(async () => {
    h = await startHolder(engine);
    process.on("warning", onWarning);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await h?.close();
  });

  it(`makes ${CALLS.toLocaleString("en-US")} intent_list_matches calls on one session without a listener warning`, async () => {
    const setup = await h.connect("setup");
    const { intentCode } = await activeIntent(h, setup, "long.session@example.sk");

    const signals = new Set<AbortSignal>();
    const guarded = scopedSignalFetch();
    const client = new Client({ name: "long-lived", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(h.mcpUrl, {
      fetch: (input, init) => {
        if (init?.signal) signals.add(init.signal);
        return guarded(input, init);
      },
    });
    await client.connect(transport);
    const sessionId = transport.sessionId;
    const listeners = () =>
      [...signals].reduce((sum, signal) => sum + getEventListeners(signal, "abort").length, 0);
    const counts: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const result = await client.callTool({ name: "intent_list_matches", arguments: { intentCode } });
      if (result.isError) throw new Error(`call ${i} failed`);
      if (i % 250 === 0) counts.push(listeners());
    }
    counts.push(listeners());
    expect(transport.sessionId).toBe(sessionId);
    // One session-wide signal. It holds the links of what is open for the whole session (the
    // standalone SSE stream), never one per call: the count does not grow.
    expect(signals.size).toBe(1);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    expect(new Set(counts).size).toBe(1);
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    // This 2025 client's session is the only one: the 2026-07-28 client that published holds none.
    expect(h.mcp.sessionCount).toBe(1);
    await client.close();
  }, 180_000);
});
