// Policies as data and checkUrl, the subscribe-time check that gives the exact refusal reason.
import { describe, expect, it } from "vitest";
import {
  checkUrl,
  developmentPolicy,
  judgeAddress,
  MAX_RESPONSE_BYTES,
  PRODUCTION_TIMEOUT_MS,
  productionPolicy,
} from "../src/egress/index.js";
import { isWebhookError } from "../src/errors.js";

const prod = productionPolicy({ blockedHosts: ["Holder.Example.", "*.internal.example"] });
const dev = developmentPolicy();

describe("productionPolicy and developmentPolicy", () => {
  it("production is push profile §6 rule 1 and cannot be changed afterwards", () => {
    expect(prod).toMatchObject({
      mode: "production",
      protocols: ["https:"],
      ports: [443],
      allowIpLiterals: false,
      requireDomainName: true,
      allowLoopback: false,
      timeoutMs: 10_000,
      maxResponseBytes: 4096,
      blockedHosts: ["holder.example", "*.internal.example"],
    });
    expect(PRODUCTION_TIMEOUT_MS).toBe(10_000);
    expect(MAX_RESPONSE_BYTES).toBe(4096);
    expect(Object.isFrozen(prod)).toBe(true);
    expect(Object.isFrozen(prod.protocols)).toBe(true);
  });

  it("development adds http, any port, IP literals and loopback, and nothing else", () => {
    expect(dev).toMatchObject({
      mode: "development",
      protocols: ["https:", "http:"],
      ports: "any",
      allowIpLiterals: true,
      requireDomainName: false,
      allowLoopback: true,
      timeoutMs: 10_000,
      maxResponseBytes: 4096,
    });
  });

  it("accepts a lower timeout for tests and refuses a higher or odd one", () => {
    expect(productionPolicy({ timeoutMs: 50 }).timeoutMs).toBe(50);
    for (const timeoutMs of [0, -1, 10_001, 1.5, Number.NaN]) {
      expect(() => productionPolicy({ timeoutMs })).toThrow(
        expect.objectContaining({ code: "ERR_EGRESS_POLICY" }) as unknown as Error,
      );
    }
  });

  it("normalises subnets and refuses ones that are not CIDR", () => {
    const policy = productionPolicy({
      allowSubnets: ["127.0.0.2", "fd00::/8"],
      blockedSubnets: [" 8.8.8.0/24 "],
    });
    expect(policy.allowSubnets).toEqual(["127.0.0.2/32", "fd00::/8"]);
    expect(policy.blockedSubnets).toEqual(["8.8.8.0/24"]);
    for (const bad of ["10.0.0.0/33", "not-a-subnet", "::/129", ""]) {
      expect(() => productionPolicy({ allowSubnets: [bad] })).toThrow(
        expect.toSatisfy(isWebhookError) as Error,
      );
    }
  });

  it("the test-only port option replaces 443 and must be a port", () => {
    expect(productionPolicy({ port: 8443 }).ports).toEqual([8443]);
    expect(() => productionPolicy({ port: 0 })).toThrow(expect.toSatisfy(isWebhookError) as Error);
    expect(() => productionPolicy({ port: 70_000 })).toThrow(expect.toSatisfy(isWebhookError) as Error);
  });
});

const refusals: [string, RegExp][] = [
  ["not a url", /not a valid absolute URL/],
  ["/relative/path", /not a valid absolute URL/],
  ["http://hook.example.com/", /must use https/],
  ["ftp://hook.example.com/", /must use https/],
  ["javascript:alert(1)", /must use https/],
  ["https://hook.example.com:8443/", /must use port 443/],
  ["https://hook.example.com:80/", /must use port 443/],
  ["https://user:pass@hook.example.com/", /user name or password/],
  ["https://user@hook.example.com/", /user name or password/],
  ["https://:pass@hook.example.com/", /user name or password/],
  ["https://holder.example/", /this server's own hosts/],
  ["https://HOLDER.EXAMPLE./hook", /this server's own hosts/],
  ["https://api.internal.example/", /this server's own hosts/],
  ["https://localhost/", /must not name localhost/],
  ["https://app.localhost/", /must not name localhost/],
  ["https://intranet/", /fully qualified domain name/],
  ["https://127.0.0.1/", /domain name, not an IP address/],
  ["https://[::1]/", /domain name, not an IP address/],
  ["https://[2606:4700::1111]/", /domain name, not an IP address/],
  ["https://8.8.8.8/", /domain name, not an IP address/],
];

describe("checkUrl in production", () => {
  it.each(refusals)("%s is refused: %s", (url, reason) => {
    const result = checkUrl(url, prod);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  // The WHATWG URL parser turns every odd IPv4 spelling into a dotted quad before we look.
  it.each([
    ["2130706433", "127.0.0.1"],
    ["0x7f.1", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["017700000001", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["127.0.1", "127.0.0.1"],
    ["0", "0.0.0.0"],
    ["0x0", "0.0.0.0"],
    ["3232235777", "192.168.1.1"],
    ["0xa9.0xfe.0xa9.0xfe", "169.254.169.254"],
    ["[0:0:0:0:0:ffff:7f00:1]", "[::ffff:7f00:1]"],
    ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"],
  ])("odd spelling %s is canonicalised to %s, then refused as an IP literal", (host, canonical) => {
    expect(new URL(`https://${host}/`).hostname).toBe(canonical);
    const result = checkUrl(`https://${host}/`, prod);
    expect(result).toEqual({
      ok: false,
      reason: "the URL must name its host by a domain name, not an IP address",
    });
  });

  it("accepts an https URL with a domain name and returns it normalised, without its fragment", () => {
    const result = checkUrl("https://Hook.Example.COM./webhooks/abc?x=1#frag", prod);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.host).toBe("hook.example.com");
    expect(result.port).toBe(443);
    expect(result.url.href).toBe("https://hook.example.com./webhooks/abc?x=1");
    expect(result.ipLiteral).toBeUndefined();
    expect(checkUrl(new URL("https://hook.example.com:443/"), prod).ok).toBe(true);
  });

  it("does not mistake a look-alike for an own host", () => {
    expect(checkUrl("https://holder.example.evil.test/", prod).ok).toBe(true);
    expect(checkUrl("https://notholder.example/", prod).ok).toBe(true);
    expect(checkUrl("https://internal.example/", prod).ok).toBe(true); // the wildcard is subdomains only
  });
});

describe("checkUrl in development", () => {
  it("allows http, other ports, single labels and loopback literals", () => {
    for (const url of [
      "http://localhost:3000/",
      "http://127.0.0.1:8080/",
      "http://[::1]:1/",
      "https://intranet/",
    ]) {
      expect(checkUrl(url, dev), url).toMatchObject({ ok: true });
    }
    expect(checkUrl("http://127.0.0.1:8080/", dev)).toMatchObject({ ipLiteral: "127.0.0.1", port: 8080 });
  });

  it("still refuses private, link-local, unspecified and NAT64 literals, in plain words", () => {
    for (const [url, words] of [
      ["http://10.0.0.1/", "a private-network address"],
      ["http://169.254.169.254/latest/meta-data/", "a link-local address"],
      ["http://0.0.0.0:8080/", "an unspecified ('this host') address"],
      ["http://[fd00:ec2::254]/", "a unique-local IPv6 address"],
      ["http://[64:ff9b::7f00:1]/", "a loopback address"],
      ["http://user:pw@127.0.0.1/", "user name or password"],
    ] as const) {
      const result = checkUrl(url, dev);
      expect(result.ok, url).toBe(false);
      if (!result.ok) expect(result.reason).toContain(words);
    }
  });
});

describe("judgeAddress: the policy's subnet lists", () => {
  it("blockedSubnets win over public and over allowSubnets, embedded IPv4 included", () => {
    const policy = productionPolicy({ blockedSubnets: ["8.8.8.0/24"], allowSubnets: ["8.8.8.8/32"] });
    expect(judgeAddress(policy, "8.8.8.8")).toMatchObject({
      allowed: false,
      reason: "it is in a subnet this server blocks",
    });
    expect(judgeAddress(policy, "::ffff:8.8.8.8").allowed).toBe(false);
    expect(judgeAddress(policy, "64:ff9b::8.8.8.8").allowed).toBe(false);
    expect(judgeAddress(policy, "1.1.1.1").allowed).toBe(true);
  });

  it("allowSubnets let a private range through, as Svix's whitelist_subnets do", () => {
    const policy = productionPolicy({ allowSubnets: ["10.1.0.0/16", "fd00:1::/32"] });
    expect(judgeAddress(policy, "10.1.2.3").allowed).toBe(true);
    expect(judgeAddress(policy, "::ffff:10.1.2.3").allowed).toBe(true);
    expect(judgeAddress(policy, "fd00:1::5").allowed).toBe(true);
    expect(judgeAddress(policy, "10.2.0.1")).toMatchObject({
      allowed: false,
      reason: "it is a private-network address",
    });
    expect(judgeAddress(policy, "127.0.0.1").allowed).toBe(false);
  });

  it("development allows loopback in every spelling but the NAT64 one", () => {
    for (const address of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1", "::ffff:0:127.0.0.1"]) {
      expect(judgeAddress(dev, address).allowed, address).toBe(true);
    }
    for (const address of ["64:ff9b::7f00:1", "0.0.0.0", "::", "10.0.0.1", "fe80::1", "::7f00:1"]) {
      expect(judgeAddress(dev, address).allowed, address).toBe(false);
    }
  });
});
