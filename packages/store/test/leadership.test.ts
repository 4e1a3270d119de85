import { createLeadership, type Database, leadershipMigrations, migrate } from "@doorbell/store";
import { expect, it } from "vitest";
import { forEachEngine } from "./engines.js";

// Issue 14 item 2: background work runs in one process at a time, and a dead leader's work resumes.
forEachEngine((fixture) => {
  const clockAt = (start: number) => {
    let now = start;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it("one leader among concurrent callers; it renews; others take over only once it expired", async () => {
    await migrate(fixture.db, [leadershipMigrations]);
    const clock = clockAt(1_000_000);
    // PostgreSQL: each process has its own handle; SQLite: one handle stands for them.
    const handles: Database[] = [];
    for (let i = 0; i < 4; i++)
      handles.push(fixture.dialect === "postgres" ? await fixture.connect() : fixture.db);
    const processes = handles.map((store, i) =>
      createLeadership(store, { name: "test.one", ttlMs: 30_000, clock: clock.now, owner: `p${i}` }),
    );
    // Whichever caller wins the first race leads (on PostgreSQL any of them may come first).
    let leader = -1;
    for (let round = 0; round < 5; round++) {
      const held = await Promise.all(processes.map((p) => p.hold()));
      expect(held.filter(Boolean)).toHaveLength(1);
      if (round === 0) leader = held.indexOf(true);
      expect(held.indexOf(true)).toBe(leader); // the first leader keeps renewing
      clock.advance(15_000);
    }
    // The leader dies (stops renewing): nobody takes over before its lease ends, someone after.
    const others = processes.filter((_, i) => i !== leader);
    clock.advance(14_000);
    expect((await Promise.all(others.map((p) => p.hold()))).filter(Boolean)).toHaveLength(0);
    clock.advance(1_000);
    const after = await Promise.all(others.map((p) => p.hold()));
    expect(after.filter(Boolean)).toHaveLength(1);
    // The old leader, back, is not a leader any more.
    expect(await processes[leader]?.hold()).toBe(false);
  });

  it("release hands over at once", async () => {
    await migrate(fixture.db, [leadershipMigrations]);
    const clock = clockAt(5_000_000);
    const a = createLeadership(fixture.db, { name: "test.release", clock: clock.now, owner: "a" });
    const b = createLeadership(fixture.db, { name: "test.release", clock: clock.now, owner: "b" });
    expect(await a.hold()).toBe(true);
    expect(await b.hold()).toBe(false);
    await b.release(); // not the owner: changes nothing
    expect(await b.hold()).toBe(false);
    await a.release();
    expect(await b.hold()).toBe(true);
    expect(await a.hold()).toBe(false);
  });

  it("a leader frozen past its lease (another took it) is told so at its pass's next beat", async () => {
    await migrate(fixture.db, [leadershipMigrations]);
    const clock = clockAt(9_000_000);
    const other = fixture.dialect === "postgres" ? await fixture.connect() : fixture.db;
    const a = createLeadership(fixture.db, { name: "test.keep", ttlMs: 1_000, clock: clock.now, owner: "a" });
    const b = createLeadership(other, { name: "test.keep", ttlMs: 1_000, clock: clock.now, owner: "b" });
    expect(await a.hold()).toBe(true);
    const reason = await a.keep(async (signal) => {
      clock.advance(2_000); // a stalls for two leases mid-pass: b takes the lease that ran out
      expect(await b.hold()).toBe(true);
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      return signal.reason as { code?: string };
    });
    expect(reason.code).toBe("ERR_STORE_LEADERSHIP_LOST");
    expect(await a.hold()).toBe(false);
    expect(await b.hold()).toBe(true);
  });

  it("refuses a lease shorter than a second", () => {
    expect(() => createLeadership(fixture.db, { name: "x", ttlMs: 10 })).toThrow(/at least 1000 ms/);
  });
});
