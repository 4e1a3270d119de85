// Issue #17: `doorbell agent watch` says when a doorbell rang and when its next read is due, and
// after a withdrawal says so and exits by itself. Against a real holder on loopback that rings a
// real doorbell endpoint served by the command.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningHolder, startHolder } from "../../agent/test/holder-fixture.js";
import { agentCommand } from "../src/commands/agent.js";
import { captureIo } from "./command-harness.js";

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("doorbell agent watch: doorbells and the end of an intent", () => {
  let h: RunningHolder;
  let dir: string;
  beforeAll(async () => {
    h = await startHolder({ realClock: true });
    dir = mkdtempSync(join(tmpdir(), "doorbell-cli-watch-"));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints each doorbell with the next read, each read, and stops by itself after a withdrawal", async () => {
    const email = "watch-doorbells@example.sk";
    const { intentCode } = await h.activeIntent(email);
    const t = captureIo({ DOORBELL_INTENT_CODE: intentCode });
    let watching = false;
    // Never told to stop: the command must end by itself.
    const done = agentCommand(
      ["watch", "--holder", h.mcpUrl, "--listen", "127.0.0.1:0", "--state", join(dir, "state.json")],
      t.io,
      { until: new Promise<void>(() => {}), onWatching: () => (watching = true) },
    );
    try {
      // A real subscription: the person allows it from the mailed link (a test call never rings matches).
      await h.allowDoorbells(email, 20_000);
      await until(() => watching && /doorbells: doorbells active until/.test(t.out()), "active doorbells");
      await h.addOffers(1);
      await until(
        () => /doorbell rang at \S+Z: new matches announced; next read now/.test(t.out()),
        "the doorbell",
      );
      await until(() => /new match: Škoda Octavia/.test(t.out()), "the match");
      await until(
        () => /read matches: 1 new; next read due \S+Z \(in \d+ (h|min)\)/.test(t.out()),
        "the read line with the next read",
      );

      const principal = await h.holder.services.intents.principalForCode(intentCode);
      if (principal === undefined) throw new Error("the code opens nothing");
      await h.holder.services.intents.withdraw(principal);
      expect(await done).toBe(0);
    } catch (error) {
      throw new Error(`${String(error)}\n--- stdout\n${t.out()}\n--- stderr\n${t.err()}`);
    }
    const out = t.out();
    expect(out).toMatch(
      /doorbell rang at \S+Z: (the intent's status changed to withdrawn|the holder ended the doorbells \(intent-withdrawn\)); next read now\n(.*\n)*intent int_\w+: withdrawn\nthe intent was withdrawn: nothing more to watch; stopping\n/,
    );
    expect(out).toContain("the intent was withdrawn: nothing more to watch; stopping");
    expect(out).not.toContain(intentCode);
  });
});
