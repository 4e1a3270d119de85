/**
 * Issue 16 item 6: `doorbell catalogue import`, in a process of its own, lets V8's heap grow 30 %
 * past its live set (not about 4×), unless the person's own Node flags already chose how much.
 */
import { describe, expect, it } from "vitest";
import { boundImportHeap, IMPORT_HEAP_GROWING_PERCENT } from "../src/commands/import-heap.js";

describe("the catalogue import's heap growth", () => {
  it("keeps a growth the command line or NODE_OPTIONS gave", () => {
    expect(boundImportHeap(["--heap-growing-percent=50"], undefined)).toBeUndefined();
    expect(boundImportHeap(["--heap-growing-percent", "50"], "")).toBeUndefined();
    expect(boundImportHeap([], "--max-old-space-size=512 --heap_growing_percent=10")).toBeUndefined();
  });

  it("sets its own otherwise, whatever else the flags say", () => {
    expect(IMPORT_HEAP_GROWING_PERCENT).toBe(30);
    expect(boundImportHeap(["--max-old-space-size=512"], "--enable-source-maps")).toBe(30);
  });
});
