// The heap bound a process takes when the operator gives none, and how admission follows the
// heap: refused while over the bound, admitted again below 90 % of it, looked at most every 100 ms.
import { describe, expect, it } from "vitest";
import { createAdmission } from "../src/admission.js";
import { chooseHeapBound, heapGauge, machineMemory } from "../src/heap-bound.js";

const MB = 1024 * 1024;
const GB = 1024 * MB;

describe("the heap bound", () => {
  it("is 85 % of V8's heap limit, and at most half the memory the process may use", () => {
    expect(chooseHeapBound({ heapLimit: 4 * GB, memory: 24 * GB })).toBe(Math.floor(4 * GB * 0.85));
    // A 1 GB container whose Node still sized its heap for the machine.
    expect(chooseHeapBound({ heapLimit: 4 * GB, memory: 1 * GB })).toBe(512 * MB);
    const here = machineMemory();
    expect(here.heapLimit).toBeGreaterThan(0);
    expect(here.memory).toBeGreaterThan(0);
    expect(chooseHeapBound()).toBe(chooseHeapBound(here));
  });

  it("refuses new requests while the heap is over it, and admits again below 90 % of it", async () => {
    let used = 500 * MB;
    let now = 0;
    const gauge = heapGauge(1000 * MB, { used: () => used, now: () => now });
    const admission = createAdmission({ concurrent: 2, waiting: 2, heapBound: 1000 * MB }, gauge);
    (await admission.enter())?.();

    used = 1001 * MB;
    now += 50; // looked at 50 ms ago: not again yet
    const inHand = await admission.enter();
    expect(inHand).toBeTypeOf("function");
    now += 100;
    // Asking whether it would refuse counts nothing (the quick call asks before handing a pull on).
    expect(admission.wouldRefuse()).toBe(true);
    expect([admission.refused, admission.refusedForHeap]).toEqual([0, 0]);
    expect(await admission.enter()).toBeUndefined();
    expect(await admission.enter(2)).toBeUndefined();
    expect([admission.refused, admission.refusedForHeap]).toEqual([3, 3]);
    // The request in hand finishes as usual.
    inHand?.();
    expect(admission.active).toBe(0);

    used = 950 * MB; // under the bound, not yet under 90 % of it
    now += 100;
    expect(await admission.enter()).toBeUndefined();
    used = 899 * MB;
    now += 100;
    expect(admission.wouldRefuse()).toBe(false);
    const again = await admission.enter();
    expect(again).toBeTypeOf("function");
    again?.();
    expect(admission.refusedForHeap).toBe(4);
  });

  it("takes no bound at Infinity, and refuses a bound of 0, a negative or a non-number", () => {
    const none = createAdmission({ concurrent: 1, waiting: 0, heapBound: Number.POSITIVE_INFINITY });
    expect(none.limits.heapBound).toBe(Number.POSITIVE_INFINITY);
    for (const heapBound of [0, -1, Number.NaN, JSON.parse('"1"')]) {
      expect(() => createAdmission({ concurrent: 1, waiting: 0, heapBound })).toThrow(
        "the heap bound must be a number of bytes above 0 (Infinity for none)",
      );
    }
    expect(createAdmission({ concurrent: 1, waiting: 0 }).limits.heapBound).toBe(chooseHeapBound());
  });
});
