// Issue #14 item 2: expiry, sweeps, digests and purges run in one process across all processes on
// one database (here two handles, as two `doorbell serve` would have), and a dead leader's work
// resumes in another process once its lease expired.
import { type Database, leadershipMigrations, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackground } from "../../src/cluster/background.js";

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("one process runs the work; when it dies another resumes it; a graceful stop hands over at once", async () => {
    await migrate(engine.db, [leadershipMigrations]);
    const handles: Database[] = [await engine.connect(), await engine.connect(), await engine.connect()];
    const runs = [0, 0, 0];
    const errors: Error[] = [];
    const processes = handles.map((store, i) =>
      startBackground({
        store,
        intervalMs: 200,
        ttlMs: 1_000,
        work: async () => {
          runs[i] = (runs[i] as number) + 1;
        },
        onError: (error) => errors.push(error),
      }),
    );
    try {
      await Promise.all(processes.map((p) => p.tick()));
      await until(() => runs.reduce((a, b) => a + b, 0) >= 5, "five passes");
      const leader = runs.findIndex((n) => n > 0);
      expect(runs.filter((n) => n > 0)).toHaveLength(1);
      expect(processes.filter((p) => p.leading())).toHaveLength(1);

      // The leader dies: its database connection goes away, it renews nothing any more.
      await handles[leader]?.close();
      const before = [...runs];
      await until(
        () => runs.some((n, i) => i !== leader && n > (before[i] as number)),
        "another process to take over",
      );
      const second = runs.findIndex((n, i) => i !== leader && n > (before[i] as number));
      await processes[leader]?.stop();

      // A graceful stop gives the lease up: the last process takes over at its next check.
      await processes[second]?.stop();
      const third = [0, 1, 2].find((i) => i !== leader && i !== second) as number;
      const last = runs[third] as number;
      await until(() => (runs[third] as number) > last, "the last process to take over");
    } finally {
      for (const p of processes) await p.stop();
    }
  });
});
