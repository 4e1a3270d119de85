// A background pass may last longer than the leadership lease (a 1 s lease here). While it runs,
// its process renews the lease, so the other process on the database (two handles, as two
// `doorbell serve` would have) does not take over mid-pass, however often it asks. Once the leader
// stops renewing (its connection goes), its pass learns it no longer leads and stops before its
// next step, and the other process takes over as soon as the lease ran out.
import { type Database, leadershipMigrations, migrate, sql } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBackground } from "../../src/cluster/background.js";

const TTL_MS = 1_000;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("a pass longer than the lease keeps the lead while it runs; once it stops renewing it stops and another process takes over", async () => {
    await migrate(engine.db, [leadershipMigrations]);
    const [storeA, storeB] = [await engine.connect(), await engine.connect()] as [Database, Database];
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const steps: string[] = [];
    const errors: Error[] = [];
    let bRuns = 0;
    const a = startBackground({
      store: storeA,
      intervalMs: 60_000,
      ttlMs: TTL_MS,
      work: async (signal) => {
        steps.push("first step");
        await gate; // the first step takes as long as the test wants
        if (signal.aborted) return;
        steps.push("second step");
      },
      onError: (error) => errors.push(error),
    });
    const b = startBackground({
      store: storeB,
      intervalMs: 60_000,
      ttlMs: TTL_MS,
      work: async () => {
        bRuns += 1;
      },
      onError: (error) => errors.push(error),
    });
    const lease = async () => {
      const { rows } = await sql<{ owner: string; expires_at: number | string }>`
        select owner, expires_at from store_leadership where name = 'holder.background'`.execute(
        engine.db.db,
      );
      return { owner: rows[0]?.owner, expiresAt: Number(rows[0]?.expires_at) };
    };
    try {
      const passA = a.tick();
      await until(() => steps.length === 1, "the leader's pass to start");
      await b.tick();
      expect(b.leading()).toBe(false);

      // B asks on its own timer (every half lease) while A's first step goes on, until A's lease
      // has been pushed two leases past where it first ended: the first lease ran out long ago.
      const first = await lease();
      expect(first.owner).toBe(a.leadership.owner);
      await until(async () => {
        const now = await lease();
        return now.owner !== a.leadership.owner || now.expiresAt >= first.expiresAt + 2 * TTL_MS;
      }, "two leases to pass");
      expect((await lease()).owner).toBe(a.leadership.owner);
      expect(bRuns).toBe(0);
      expect(b.leading()).toBe(false);
      expect(a.leading()).toBe(true);

      // A stops renewing: its database connection goes away mid-pass.
      await storeA.close();
      await until(() => !a.leading(), "the leader to learn it no longer leads");
      await until(() => bRuns > 0, "the other process to take over");
      openGate();
      await passA;
      expect(steps).toEqual(["first step"]); // it stopped before its next step
      expect((await lease()).owner).toBe(b.leadership.owner);
    } finally {
      openGate();
      await a.stop();
      await b.stop();
    }
  });
});
