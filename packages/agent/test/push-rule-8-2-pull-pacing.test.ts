// Push profile §8.2 in the client: one intent is read at most once per 15 minutes and not before
// the holder's nextCheckAfter; an early read is refused with ERR_AGENT_PULL_TOO_EARLY and the
// instant it is allowed. A verified doorbell grants one read at once. The clock is injected.
import { describe, expect, it } from "vitest";
import { PullPacer } from "../src/holder/pacer.js";
import { AgentError, MAX_NEXT_CHECK_AFTER_MS, MIN_PULL_INTERVAL_MS } from "../src/index.js";
import { fakeClock, HOUR, MINUTE } from "./holder-fixture.js";

function refused(run: () => void): AgentError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    return error as AgentError;
  }
  throw new Error("the read was not refused");
}

describe("push rule 8.2: reads paced per intent", () => {
  it("refuses a second read within 15 minutes, saying when it is allowed", () => {
    const clock = fakeClock();
    const pacer = new PullPacer(clock.now);
    pacer.take("ic_a");
    clock.advance(15 * MINUTE - 1);
    const error = refused(() => pacer.take("ic_a"));
    expect(error.code).toBe("ERR_AGENT_PULL_TOO_EARLY");
    expect(error.retryAt).toBe(clock.now() + 1);
    expect(error.message).toMatch(/next read is allowed at .*§8\.2/);
    expect(error.message).not.toContain("ic_a");
    clock.advance(1);
    pacer.take("ic_a");
  });

  it("paces each intent on its own", () => {
    const pacer = new PullPacer(fakeClock().now);
    pacer.take("ic_a");
    pacer.take("ic_b");
  });

  it("waits for nextCheckAfter when it is later than 15 minutes, capped at 24 hours", () => {
    const clock = fakeClock();
    const pacer = new PullPacer(clock.now);
    pacer.take("ic_a");
    pacer.noteNextCheckAfter("ic_a", clock.now() + 2 * HOUR);
    expect(pacer.allowedAt("ic_a")).toBe(clock.now() + 2 * HOUR);
    pacer.take("ic_b");
    pacer.noteNextCheckAfter("ic_b", clock.now() + 90 * 24 * HOUR);
    expect(pacer.allowedAt("ic_b")).toBe(clock.now() + MAX_NEXT_CHECK_AFTER_MS);
    pacer.take("ic_c");
    pacer.noteNextCheckAfter("ic_c", clock.now() + MINUTE);
    expect(pacer.allowedAt("ic_c")).toBe(clock.now() + MIN_PULL_INTERVAL_MS);
  });

  it("lets a doorbell grant one read at once, not two", () => {
    const clock = fakeClock();
    const pacer = new PullPacer(clock.now);
    pacer.take("ic_a");
    pacer.noteNextCheckAfter("ic_a", clock.now() + 5 * HOUR);
    clock.advance(MINUTE);
    pacer.grant("ic_a");
    pacer.grant("ic_a");
    pacer.take("ic_a");
    expect(refused(() => pacer.take("ic_a")).code).toBe("ERR_AGENT_PULL_TOO_EARLY");
  });

  it("keeps its pace across a restart through the saved state", () => {
    const clock = fakeClock();
    const before = new PullPacer(clock.now);
    before.take("ic_a");
    const after = new PullPacer(clock.now);
    after.restore("ic_a", before.state("ic_a"));
    expect(refused(() => after.take("ic_a")).code).toBe("ERR_AGENT_PULL_TOO_EARLY");
  });

  it("refuses an interval under 15 minutes", () => {
    expect(() => new PullPacer(Date.now, MINUTE)).toThrow(/at least 15 minutes/);
  });
});
