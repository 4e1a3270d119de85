// classifyAddress: which addresses are public (push profile §6 rule 1), covering the gaps of a
// plain ipaddr.js range() rule listed in reference/webhooks.md §4.2–4.3.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AddressRange, classifyAddress, isPublicAddress } from "../src/egress/index.js";

const PUBLIC = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "2606:4700::1111",
  "2a00:1450:4001:81c::200e",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "64:ff9b::808:808",
  "64:ff9b::8.8.8.8",
  "[2606:4700::1111]",
];

const NOT_PUBLIC: [string, AddressRange][] = [
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["100.64.0.1", "carrierGradeNat"],
  ["100.127.255.254", "carrierGradeNat"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "linkLocal"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.0.0.1", "ietfProtocol"],
  ["192.0.2.1", "documentation"],
  ["192.88.99.1", "relay6to4"],
  ["192.168.1.1", "private"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["198.51.100.1", "documentation"],
  ["203.0.113.1", "documentation"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["192.31.196.1", "special"], // AS112: known to ipaddr.js, not in our list
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::7f00:1", "ipv4Compatible"],
  ["::127.0.0.1", "ipv4Compatible"],
  ["::808:808", "ipv4Compatible"], // even with a public IPv4 inside: deprecated, never routed
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::FFFF:127.0.0.1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "linkLocal"],
  ["::ffff:0:7f00:1", "loopback"],
  ["::ffff:0:a00:1", "private"],
  ["64:ff9b::7f00:1", "loopback"],
  ["64:ff9b::a9fe:a9fe", "linkLocal"],
  ["64:ff9b::10.0.0.1", "private"],
  ["64:ff9b:1::808:808", "nat64Local"],
  ["100::1", "discard"],
  ["2001::1", "teredo"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
  ["2001:2::1", "ietfProtocol"],
  ["2001:1ff::1", "ietfProtocol"],
  ["2001:db8::1", "documentation"],
  ["2002:7f00:1::1", "6to4"],
  ["2002:808:808::1", "6to4"],
  ["3fff::1", "documentation"],
  ["3fff:fff::1", "documentation"],
  ["5f00::1", "segmentRouting"],
  ["fc00::1", "uniqueLocal"],
  ["fd00:ec2::254", "uniqueLocal"],
  ["fd7a:115c:a1e0::1", "uniqueLocal"],
  ["fe80::1", "linkLocal"],
  ["fe80::1%eth0", "linkLocal"],
  ["[fe80::1%25eth0]", "linkLocal"],
  ["febf::1", "linkLocal"],
  ["fec0::1", "siteLocal"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "multicast"],
  ["4000::1", "notGlobalUnicast"],
  ["1::1", "notGlobalUnicast"],
  ["e000::1", "notGlobalUnicast"],
  ["2620:4f:8000::1", "special"], // AS112 for IPv6
  // Not canonical text: resolvers and sockets never produce these, so they are not trusted.
  ["127.1", "invalid"],
  ["2130706433", "invalid"],
  ["0x7f.0.0.1", "invalid"],
  ["017700000001", "invalid"],
  ["localhost", "invalid"],
  ["", "invalid"],
  ["1.2.3.4.5", "invalid"],
];

describe("classifyAddress", () => {
  it.each(PUBLIC)("%s is public", (address) => {
    const verdict = classifyAddress(address);
    expect(verdict).toMatchObject({ public: true, range: "public" });
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(NOT_PUBLIC)("%s is not public: %s", (address, range) => {
    const verdict = classifyAddress(address);
    expect(verdict.range).toBe(range);
    expect(verdict.public).toBe(false);
    expect(isPublicAddress(address)).toBe(false);
    expect(verdict.description).not.toContain(address || "\u0000");
  });

  it("treats a value that is not a string as invalid (a resolver is injectable)", () => {
    expect(classifyAddress(2130706433 as unknown as string)).toMatchObject({
      public: false,
      range: "invalid",
    });
    expect(classifyAddress(undefined as unknown as string).public).toBe(false);
  });

  it("reports the canonical address, the embedded IPv4 and how it was embedded", () => {
    expect(classifyAddress("::FFFF:7F00:1")).toMatchObject({
      address: "::ffff:127.0.0.1",
      embeddedIPv4: "127.0.0.1",
      embedding: "ipv4Mapped",
    });
    expect(classifyAddress("::ffff:0:a9fe:a9fe")).toMatchObject({
      address: "::ffff:0:169.254.169.254",
      embedding: "siit",
    });
    expect(classifyAddress("64:ff9b::0808:0808")).toMatchObject({
      address: "64:ff9b::8.8.8.8",
      embedding: "nat64",
      public: true,
    });
    expect(classifyAddress("[fe80::1%eth0]").address).toBe("fe80::1");
    expect(classifyAddress("2001:DB8:0:0::1").address).toBe("2001:db8::1");
  });
});

describe("classifyAddress properties", () => {
  const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join("."));

  it("an IPv4 address carried in IPv6 (mapped, SIIT, NAT64) gets the IPv4 verdict", () => {
    fc.assert(
      fc.property(ipv4, (v4) => {
        const plain = classifyAddress(v4);
        for (const carried of [`::ffff:${v4}`, `::ffff:0:${v4}`, `64:ff9b::${v4}`]) {
          const verdict = classifyAddress(carried);
          expect(verdict.public).toBe(plain.public);
          expect(verdict.range).toBe(plain.range);
        }
        expect(classifyAddress(`::${v4}`).public).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("no IPv6 address outside 2000::/3 is public, except NAT64 64:ff9b::/96", () => {
    const group = fc.nat(0xffff).map((n) => n.toString(16));
    const ipv6 = fc.array(group, { minLength: 8, maxLength: 8 }).map((g) => g.join(":"));
    fc.assert(
      fc.property(ipv6, (address) => {
        const first = Number.parseInt(address.split(":")[0] ?? "0", 16);
        const inGlobalUnicast = first >= 0x2000 && first <= 0x3fff;
        const nat64 = address.startsWith("64:ff9b:0:0:0:0:");
        if (!inGlobalUnicast && !nat64) expect(classifyAddress(address).public).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });

  it("every address in a blocked IPv4 block is refused, at its edges too", () => {
    for (const [first, last] of [
      ["10.0.0.0", "10.255.255.255"],
      ["100.64.0.0", "100.127.255.255"],
      ["172.16.0.0", "172.31.255.255"],
      ["198.18.0.0", "198.19.255.255"],
      ["224.0.0.0", "255.255.255.254"],
    ]) {
      expect(isPublicAddress(first as string)).toBe(false);
      expect(isPublicAddress(last as string)).toBe(false);
    }
    for (const neighbour of [
      "9.255.255.255",
      "11.0.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "172.15.255.255",
    ]) {
      expect(isPublicAddress(neighbour)).toBe(true);
    }
    for (const neighbour of ["172.32.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255"]) {
      expect(isPublicAddress(neighbour)).toBe(true);
    }
  });
});
