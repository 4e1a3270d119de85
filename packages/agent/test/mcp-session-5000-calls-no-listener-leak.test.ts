// DESIGN.md's caveat: the SDK client on one long-lived Streamable HTTP session used to warn
// MaxListenersExceededWarning after ~1,500 calls, because Node 20's fetch hangs an abort listener
// on the session-wide signal per request. The holder client gives each request its own signal
// (perRequestSignalFetch): 5,000 calls on one session, no warning, the listener count flat.
import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HolderClient, perRequestSignalFetch } from "../src/index.js";
import { type RunningHolder, startHolder } from "./holder-fixture.js";

// Past the 1,500 listeners at which Node warned (about 10 s on an idle machine).
const CALLS = 2_000;

let h: RunningHolder;
const warnings: Error[] = [];
const onWarning = (warning: Error) => {
  warnings.push(warning);
};
beforeAll(async () => {
  h = await startHolder();
  process.on("warning", onWarning);
});
afterAll(async () => {
  process.off("warning", onWarning);
  await h?.close();
});

describe("one MCP session, thousands of calls", () => {
  it(`makes ${CALLS.toLocaleString("en-US")} calls without piling up abort listeners`, async () => {
    const { intentCode } = await h.activeIntent();
    // Below the guard: every request reaches fetch with a signal of its own, never the session's.
    let requests = 0;
    let shared = 0;
    const seen = new WeakSet<AbortSignal>();
    const below = (input: string | URL, init?: RequestInit) => {
      requests += 1;
      if (init?.signal) {
        if (seen.has(init.signal)) shared += 1;
        seen.add(init.signal);
      }
      return fetch(input, init);
    };
    const client = await HolderClient.connect({ url: h.mcpUrl, fetch: below });
    for (let i = 0; i < CALLS; i++) await client.get(intentCode);
    expect(requests).toBeGreaterThan(CALLS);
    expect(shared).toBe(0);
    // Without the guard this run logs MaxListenersExceededWarning (seen: over 2,500 of them).
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
    await client.close();
  }, 240_000);

  it("the guard unlinks a request's signal once its body is read, and still aborts an open one", async () => {
    const session = new AbortController();
    const guarded = perRequestSignalFetch((_input, init) => {
      const signal = init?.signal as AbortSignal;
      return Promise.resolve(
        new Response(
          new ReadableStream({
            start(controller) {
              signal.addEventListener("abort", () => controller.error(signal.reason));
              controller.enqueue(new TextEncoder().encode("data"));
            },
          }),
        ),
      );
    });
    const response = await guarded("http://unused.invalid/", { signal: session.signal });
    expect(getEventListeners(session.signal, "abort")).toHaveLength(1);
    session.abort(new Error("session closed"));
    await expect(response.text()).rejects.toThrow(/session closed/);
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
  });
});
