// Issue #14 item 1, shared limits: a limit counted in the holder's database holds across
// processes on one database (two handles, two limiters here, as two `doorbell serve` would have),
// windows end on time, and keys are stored only as the holder hashes them. The client address
// comes from a trusted proxy only, and IPv6 clients are counted by /64.
import { createHmac } from "node:crypto";
import { migrate } from "@doorbell/store";
import { forEachEngine, pgStatementsDuring } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addressKey,
  createClientAddressResolver,
  createSharedLimiter,
  limitsMigrations,
  parseClientAddressHeader,
  parseTrustedProxies,
} from "../../src/limits/index.js";

const hmac = (key: string) => createHmac("sha256", "test-limits-key").update(key).digest("base64url");

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("two processes on one database share one count", async () => {
    await migrate(engine.db, [limitsMigrations]);
    const other = await engine.connect();
    let now = 1_800_000_000_000;
    const clock = () => now;
    const rules = { "mcp.session": { points: 3, durationSeconds: 60 } };
    const a = createSharedLimiter({ store: engine.db, rules, clock, hashKey: hmac, purgeEveryMs: 0 });
    const b = createSharedLimiter({ store: other, rules, clock, hashKey: hmac, purgeEveryMs: 0 });
    try {
      // On PostgreSQL a count commits without waiting for the WAL flush (a crash forgets a few).
      const { texts } = await pgStatementsDuring(() => a.consume("mcp.session", "192.0.2.200"));
      if (engine.dialect === "postgres") {
        expect(texts.filter((text) => /holder_rate_limits/.test(text))).toEqual([
          expect.stringMatching(/set_config\('synchronous_commit', 'off', true\)/),
        ]);
      }
      expect(await a.consume("mcp.session", "203.0.113.7")).toEqual({ ok: true, remaining: 2 });
      expect(await b.consume("mcp.session", "203.0.113.7")).toEqual({ ok: true, remaining: 1 });
      expect(await a.consume("mcp.session", "203.0.113.7")).toEqual({ ok: true, remaining: 0 });
      expect(await b.consume("mcp.session", "203.0.113.7")).toEqual({ ok: false, retryAfterSeconds: 60 });
      // Another client is not touched.
      expect((await b.consume("mcp.session", "203.0.113.8")).ok).toBe(true);
      now += 30_000;
      expect(await a.consume("mcp.session", "203.0.113.7")).toEqual({ ok: false, retryAfterSeconds: 30 });
      now += 30_000;
      expect(await b.consume("mcp.session", "203.0.113.7")).toEqual({ ok: true, remaining: 2 });

      // Concurrent calls from both processes never let more than the rule through.
      now += 61_000;
      const verdicts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).consume("mcp.session", "198.51.100.1")),
      );
      expect(verdicts.filter((v) => v.ok)).toHaveLength(3);

      // The table holds keyed hashes only, never the address.
      const rows = await engine.db.db
        .withTables<{ holder_rate_limits: { key: string } }>()
        .selectFrom("holder_rate_limits")
        .select("key")
        .execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.key).not.toMatch(/203\.0\.113|198\.51\.100/);

      now += 120_000;
      expect(await a.purgeExpired()).toBeGreaterThan(0);
    } finally {
      a.close();
      b.close();
      await other.close();
    }
  });

  it("a bucket without a rule is refused, a rule must be sane", async () => {
    const limiter = createSharedLimiter({ store: engine.db, rules: {}, purgeEveryMs: 0 });
    await expect(limiter.consume("nope", "x")).rejects.toThrow(/no limit is set/);
    expect(() =>
      createSharedLimiter({ store: engine.db, rules: { ok: { points: 0, durationSeconds: 1 } } }),
    ).toThrow(/points ≥ 1/);
  });
});

describe("client address", () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it("ignores forwarding headers from a peer that is not a trusted proxy", () => {
    const resolve = createClientAddressResolver({ trustProxy: ["10.0.0.0/8"] });
    expect(resolve("198.51.100.9", headers({ "x-forwarded-for": "1.2.3.4" }))).toBe("198.51.100.9");
    expect(resolve("198.51.100.9", headers({ forwarded: "for=1.2.3.4" }))).toBe("198.51.100.9");
    // Without --trust-proxy nobody's headers count.
    expect(createClientAddressResolver()("10.1.1.1", headers({ "x-forwarded-for": "1.2.3.4" }))).toBe(
      "10.1.1.1",
    );
  });

  it("takes the first untrusted hop from the right when the peer is a trusted proxy", () => {
    const resolve = createClientAddressResolver({ trustProxy: ["10.0.0.0/8", "fd00::/8"] });
    // The client forged the left entry; the proxy appended the real one.
    expect(resolve("10.0.0.2", headers({ "x-forwarded-for": "6.6.6.6, 203.0.113.5, 10.0.0.9" }))).toBe(
      "203.0.113.5",
    );
    expect(resolve("fd00::5", headers({ "x-forwarded-for": "203.0.113.6:5555" }))).toBe("203.0.113.6");
    const byForwarded = createClientAddressResolver({
      trustProxy: ["10.0.0.0/8", "fd00::/8"],
      header: "forwarded",
    });
    expect(
      byForwarded(
        "::ffff:10.0.0.2",
        headers({ forwarded: 'for="[2001:db8::1]:4711";proto=https, for=10.0.0.3' }),
      ),
    ).toBe("2001:db8::1");
    // "unknown" stops the walk at the proxy.
    expect(byForwarded("10.0.0.2", headers({ forwarded: "for=unknown" }))).toBe("10.0.0.2");
  });

  it("reads only the header the proxy writes; the one it passes through is never read", () => {
    const trustProxy = ["10.0.0.0/8"];
    // X-Forwarded-For by default: a Forwarded header, which the proxy passes on as the client
    // sent it, names no client, whatever it says and whether X-Forwarded-For is there or not.
    const byXff = createClientAddressResolver({ trustProxy });
    expect(byXff("10.0.0.2", headers({ forwarded: "for=1.2.3.4", "x-forwarded-for": "203.0.113.5" }))).toBe(
      "203.0.113.5",
    );
    expect(byXff("10.0.0.2", headers({ forwarded: "for=1.2.3.4" }))).toBe("10.0.0.2");
    // Forwarded when chosen: then X-Forwarded-For is the one passed through, and never read.
    const byForwarded = createClientAddressResolver({ trustProxy, header: "forwarded" });
    expect(
      byForwarded("10.0.0.2", headers({ forwarded: "for=203.0.113.5", "x-forwarded-for": "1.2.3.4" })),
    ).toBe("203.0.113.5");
    expect(byForwarded("10.0.0.2", headers({ "x-forwarded-for": "1.2.3.4" }))).toBe("10.0.0.2");
    expect(parseClientAddressHeader(" X-Forwarded-For ")).toBe("x-forwarded-for");
    expect(parseClientAddressHeader("Forwarded")).toBe("forwarded");
    expect(() => parseClientAddressHeader("x-real-ip")).toThrow(/x-forwarded-for or forwarded/);
  });

  it("keys IPv6 clients by /64 and IPv4 by address", () => {
    expect(addressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(addressKey("[2001:DB8:1:2::9]")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("not an address")).toBeUndefined();
  });

  it("refuses a malformed trusted proxy", () => {
    expect(() => parseTrustedProxies(["10.0.0.0/33"])).toThrow(/CIDR/);
    expect(() => parseTrustedProxies(["example.com"])).toThrow(/CIDR/);
    expect(() => parseTrustedProxies(["10.0.0.0/8", "::1"])).not.toThrow();
  });
});
