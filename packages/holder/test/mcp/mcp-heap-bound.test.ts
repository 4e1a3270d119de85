// The heap bound: while this process's JavaScript heap is over it, a holder admits no new MCP
// request in either era (503 with Retry-After: 1 and a JSON-RPC error, as for a full waiting room)
// and still serves its pages; once the heap is back under 90 % of the bound it serves MCP again.
// The heap is the test process's own: the bound is set just above what it uses, then a real
// allocation crosses it and a real collection brings it back.
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INITIALIZE,
  jsonRpcOf,
  MCP_HEADERS,
  modernPost,
  rawRequest,
  startHolder,
  type TestHolder,
} from "../support/mcp-harness.js";

const MB = 1024 * 1024;
/** Past the 100 ms between two looks at the heap. */
const LOOK_AGAIN_MS = 150;
const BALLAST = 50_000_000;

const usedHeap = () => v8.getHeapStatistics().used_heap_size;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function collectGarbage(): void {
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  v8.setFlagsFromString("--no-expose-gc");
  gc();
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: TestHolder;
  let bound: number;
  beforeAll(async () => {
    // Room for the holder (well under 64 MB) below the 90 % at which MCP is served again.
    collectGarbage();
    bound = Math.round((usedHeap() + 64 * MB) / 0.9);
    h = await startHolder(engine, {
      mcp: { admission: { concurrent: 32, waiting: 1024, heapBound: bound } },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const modernList = () => rawRequest(h.mcpUrl, modernPost("tools/list"));
  const legacyInitialize = () =>
    rawRequest(h.mcpUrl, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });

  it("refuses MCP requests while the heap is over its bound, serves pages, and serves MCP again once under", async () => {
    expect(h.mcp.admission.limits.heapBound).toBe(bound);
    expect((await modernList()).status).toBe(200);

    // About 400 MB of doubles on the JavaScript heap: past the bound.
    let ballast: number[] | undefined = new Array(BALLAST).fill(0.5);
    await pause(LOOK_AGAIN_MS);
    expect(usedHeap()).toBeGreaterThan(bound);
    for (const answer of [await modernList(), await legacyInitialize()]) {
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("1");
      expect(jsonRpcOf(answer).error).toMatchObject({
        code: -32000,
        message: expect.stringMatching(/busy; retry in a second/),
      });
    }
    expect(h.mcp.admission.refusedForHeap).toBeGreaterThanOrEqual(2);
    // The person's pages are no MCP request: still served.
    expect((await fetch(`${h.origin}/`)).status).toBe(200);

    expect(ballast.length).toBe(BALLAST);
    ballast = undefined;
    collectGarbage();
    await pause(LOOK_AGAIN_MS);
    expect(usedHeap()).toBeLessThan(bound * 0.9);
    expect((await modernList()).status).toBe(200);
    expect((await legacyInitialize()).status).toBe(200);
  });
});
