// Push profile §6 rule 1, end to end: postWebhook against loopback servers on port 443, with
// names resolved by a scripted resolver. Every refused case must leave every server with ZERO
// TCP connections; every allowed case makes exactly ONE, to the vetted address.
//
// Safety: no case may send a packet off this machine. Names are `.test`/`.example` and never
// reach the system resolver; any answer that is not a loopback address is first asserted to be
// refused by the policy, and only after the wiring itself is proven on loopback.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  classifyAddress,
  closeEgress,
  developmentPolicy,
  type EgressPolicy,
  isAddressAllowed,
  type PolicyOptions,
  postWebhook,
  productionPolicy,
} from "../src/egress/index.js";
import {
  bytes,
  scriptedResolver,
  startHoneypot,
  startServer,
  TEST_CERT,
  TEST_HOST,
  type TestServer,
} from "./egress-helpers.js";

const LEGIT = "127.0.0.2";
const dns = scriptedResolver();
let port = 443;
let servers: TestServer[] = [];
let legit: TestServer;
let portTrap: TestServer;
const policies: EgressPolicy[] = [];

/** Binds the three servers on one port: 443 when we may (root, free), else a high port. */
const bindAll = async (candidate: number) => {
  const started: TestServer[] = [];
  try {
    started.push(await startServer({ host: LEGIT, port: candidate }));
    started.push(await startHoneypot("127.0.0.1", candidate));
    started.push(await startHoneypot("::1", candidate));
    return started;
  } catch (error) {
    await Promise.all(started.map((s) => s.close()));
    throw error;
  }
};

beforeAll(async () => {
  try {
    servers = await bindAll(443);
  } catch {
    // Not root, or 443 taken: same tests through the policy's test-only `port` option.
    for (let attempt = 0; servers.length === 0 && attempt < 20; attempt += 1) {
      port = 20_000 + Math.floor(Math.random() * 40_000);
      servers = await bindAll(port).catch(() => []);
    }
    console.warn(`egress-ssrf: port 443 unavailable, using port ${port} with the port override`);
  }
  legit = servers[0] as TestServer;
  portTrap = await startServer({ host: LEGIT });
  servers.push(portTrap);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

afterEach(async () => {
  await Promise.all(policies.splice(0).map(closeEgress));
  for (const server of servers) server.reset();
  dns.calls.length = 0;
});

const suffix = () => (port === 443 ? "" : `:${port}`);
const hookUrl = () => `https://${TEST_HOST}${suffix()}/hook`;

/** A fresh policy (and so a fresh connection pool) for every case. */
const production = (extra: PolicyOptions & { blockedHosts?: string[] } = {}) => {
  const policy = productionPolicy({
    allowSubnets: [`${LEGIT}/32`],
    ca: TEST_CERT,
    resolver: dns.resolver,
    timeoutMs: 3000,
    blockedHosts: ["doorbell.example", "Own.Doorbell.Test.", "*.holder.example"],
    ...(port === 443 ? {} : { port }),
    ...extra,
  });
  policies.push(policy);
  return policy;
};
const development = () => {
  const policy = developmentPolicy({ resolver: dns.resolver, ca: TEST_CERT, timeoutMs: 3000 });
  policies.push(policy);
  return policy;
};

const totalConnections = () => servers.reduce((sum, s) => sum + s.connections, 0);
const staysLocal = (address: string) => {
  const verdict = classifyAddress(address);
  return (verdict.range === "loopback" || verdict.range === "unspecified") && verdict.embedding !== "nat64";
};

let wiringProven = false;

interface Case {
  readonly name: string;
  /** Default: https://hook.doorbell.test/hook (on the test port). */
  readonly url?: () => string;
  /** What the scripted resolver answers; absent means it must never be asked. */
  readonly answers?: string[];
  readonly policy?: () => EgressPolicy;
  readonly expected: "blocked_url" | "blocked_address" | "dns_error";
}

const literal = (host: string): Case => ({
  name: `IP literal ${host}`,
  url: () => `https://${host}${suffix()}/hook`,
  answers: [LEGIT],
  expected: "blocked_url",
});
const answer = (...answers: string[]): Case => ({
  name: `resolver answers ${answers.join(", ")}`,
  answers,
  expected: "blocked_address",
});

const CASES: Case[] = [
  // Refused from the URL alone, before the resolver is asked.
  { name: "localhost", url: () => `https://localhost${suffix()}/`, expected: "blocked_url" },
  {
    name: "LOCALHOST. (case, trailing dot)",
    url: () => `https://LOCALHOST.${suffix()}/`,
    expected: "blocked_url",
  },
  {
    name: "a subdomain of localhost",
    url: () => `https://hook.localhost${suffix()}/`,
    expected: "blocked_url",
  },
  { name: "a single-label name", url: () => `https://intranet${suffix()}/`, expected: "blocked_url" },
  ...[
    "127.0.0.1",
    "127.0.0.1.",
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "017700000001",
    "0177.0.0.1",
    "127.1",
    "0",
    "0.0.0.0",
    "[::1]",
    "[::]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:7f00:1]",
    "[::ffff:a9fe:a9fe]",
    "169.254.169.254",
    "127.0.0.2", // a literal is refused even inside allowSubnets: the rule is "a domain name"
  ].map(literal),
  {
    name: "http scheme",
    url: () => `http://${TEST_HOST}${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  { name: "ftp scheme", url: () => `ftp://${TEST_HOST}/hook`, answers: [LEGIT], expected: "blocked_url" },
  { name: "file URL", url: () => "file:///etc/passwd", expected: "blocked_url" },
  {
    name: "a port other than the allowed one",
    url: () => `https://${TEST_HOST}:${portTrap.port}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  {
    name: "user name and password in the URL",
    url: () => `https://user:secret@${TEST_HOST}${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  {
    name: "user name only in the URL",
    url: () => `https://user@${TEST_HOST}${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  {
    name: "the holder's own host",
    url: () => `https://doorbell.example${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  {
    name: "the holder's own host, other case and trailing dot",
    url: () => `https://OWN.doorbell.TEST.${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  {
    name: "a subdomain of a wildcard own host",
    url: () => `https://api.holder.example${suffix()}/hook`,
    answers: [LEGIT],
    expected: "blocked_url",
  },
  { name: "an IPv6 zone id in the URL", url: () => "https://[fe80::1%25eth0]/hook", expected: "blocked_url" },

  // Refused by what the name resolves to: the resolver is asked once, nothing is dialled.
  ...[
    "127.0.0.1",
    "127.0.0.53",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "0.1.2.3",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0:7f00:1",
    "::7f00:1",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::808:808",
    "2002:7f00:1::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "100::1",
    "2001:db8::1",
    "3fff::1",
    "5f00::1",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "198.18.0.1",
    "192.0.0.1",
    "192.0.2.1",
    "192.88.99.1",
    "198.51.100.1",
    "203.0.113.1",
    "not-an-address",
  ].map((a) => answer(a)),
  // Mixed answers: one refused address refuses the name, whatever the order.
  answer(LEGIT, "127.0.0.1"),
  answer("127.0.0.1", LEGIT),
  answer(LEGIT, "::1"),
  answer(LEGIT, "::ffff:127.0.0.1"),
  { name: "resolver answers nothing", answers: [], expected: "dns_error" },

  // The development policy allows loopback, http, ports and literals, and nothing else.
  {
    name: "development: resolver answers 10.0.0.1",
    policy: development,
    answers: ["10.0.0.1"],
    expected: "blocked_address",
  },
  {
    name: "development: resolver answers 169.254.169.254",
    policy: development,
    answers: ["169.254.169.254"],
    expected: "blocked_address",
  },
  {
    name: "development: resolver answers 0.0.0.0 (reaches loopback on Linux, still refused)",
    policy: development,
    answers: ["0.0.0.0"],
    expected: "blocked_address",
  },
  {
    name: "development: resolver answers NAT64 64:ff9b::7f00:1",
    policy: development,
    answers: ["64:ff9b::7f00:1"],
    expected: "blocked_address",
  },
  {
    name: "development: literal http://169.254.169.254",
    policy: development,
    url: () => `http://169.254.169.254:${port}/`,
    expected: "blocked_url",
  },
  {
    name: "development: literal http://0.0.0.0",
    policy: development,
    url: () => `http://0.0.0.0:${port}/`,
    expected: "blocked_url",
  },
  {
    name: "development: literal http://[::]",
    policy: development,
    url: () => `http://[::]:${port}/`,
    expected: "blocked_url",
  },
  {
    name: "development: literal http://[fd00:ec2::254]",
    policy: development,
    url: () => `http://[fd00:ec2::254]:${port}/`,
    expected: "blocked_url",
  },
];

const ALLOWED: { name: string; answers: string[] }[] = [
  { name: `resolver answers ${LEGIT} (in allowSubnets)`, answers: [LEGIT] },
  { name: `resolver answers ::ffff:${LEGIT} (mapped, judged by its IPv4)`, answers: [`::ffff:${LEGIT}`] },
  { name: `resolver answers ${LEGIT} twice`, answers: [LEGIT, LEGIT] },
];

describe("egress SSRF: the wiring is proven on loopback first", () => {
  it("routes a name only through the injected resolver, to the address it vetted", async () => {
    dns.answer([LEGIT]);
    const result = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy: production() });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(dns.calls).toEqual([TEST_HOST]);
    expect(legit.connections).toBe(1);
    expect(totalConnections()).toBe(1);

    // The lookup layer refuses in both families, mapped spellings and mixed answers.
    for (const answers of [["127.0.0.1"], ["::1"], ["::ffff:127.0.0.1"], [LEGIT, "127.0.0.1"]]) {
      dns.answer(answers);
      const refused = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy: production() });
      expect(refused, answers.join()).toMatchObject({ ok: false, category: "blocked_address" });
    }
    expect(dns.calls).toHaveLength(5);
    expect(totalConnections()).toBe(1);
    wiringProven = true;
  });
});

describe(`egress SSRF: ${CASES.length} refused cases make zero connections`, () => {
  it.each(CASES)("$name → $expected", async (c) => {
    const answers = c.answers ?? [];
    for (const address of answers.filter((a) => !staysLocal(a) && a !== LEGIT && a !== `::ffff:${LEGIT}`)) {
      // Never let a non-loopback answer near a socket unless the wiring and the verdict hold.
      expect(wiringProven, "wiring not proven: refusing to run a non-loopback case").toBe(true);
      const policy = c.policy?.() ?? production();
      expect(isAddressAllowed(policy, address), `${address} would be dialled`).toBe(false);
    }
    dns.answer(answers);
    const result = await postWebhook({
      url: (c.url ?? hookUrl)(),
      headers: { "webhook-id": "msg_1" },
      body: bytes('{"type":"ping"}'),
      policy: c.policy?.() ?? production(),
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.category).toBe(c.expected);
    expect(totalConnections()).toBe(0);
    expect(dns.calls).toHaveLength(c.expected === "blocked_url" ? 0 : 1);
    expect(result.body).toHaveLength(0);
    // The reason is ours, in plain words, and never echoes the address that was refused.
    expect(result.reason.length).toBeGreaterThan(10);
    for (const address of answers) expect(result.reason).not.toContain(address);
  });
});

describe("egress SSRF: allowed cases make exactly one connection, to the vetted address", () => {
  it.each(ALLOWED)("$name", async ({ answers }) => {
    dns.answer(answers);
    const result = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy: production() });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(legit.connections).toBe(1);
    expect(legit.connectionAddresses[0]).toMatch(/127\.0\.0\.2$/);
    expect(totalConnections()).toBe(1);
    expect(dns.calls).toHaveLength(1);
  });
});

describe("egress SSRF: DNS rebinding", () => {
  it("connects to the address it vetted and resolves once per connection", async () => {
    // First answer allowed, every later answer loopback: the classic rebinding attack.
    dns.answers = (_host, call) => (call === 1 ? [LEGIT] : ["127.0.0.1"]);
    const policy = production();

    const first = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy });
    expect(first).toMatchObject({ ok: true, status: 200 });
    expect(dns.calls).toHaveLength(1); // no separate "check" resolution that could disagree
    expect(legit.connectionAddresses).toEqual([LEGIT]);

    // A new connection resolves again and is refused; the honeypot never sees it.
    await closeEgress(policy);
    const second = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy });
    expect(second).toMatchObject({ ok: false, category: "blocked_address" });
    expect(dns.calls).toHaveLength(2);
    expect(totalConnections()).toBe(1);
  });

  it("reuses a vetted keep-alive connection without resolving again", async () => {
    dns.answers = (_host, call) => (call === 1 ? [LEGIT] : ["127.0.0.1"]);
    const policy = production();
    for (let i = 0; i < 3; i += 1) {
      const result = await postWebhook({ url: hookUrl(), body: bytes("{}"), policy });
      expect(result, `post ${i}`).toMatchObject({ ok: true });
      // undici frees the socket for reuse one turn of the event loop after the body ends.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(dns.calls).toHaveLength(1);
    expect(legit.connections).toBe(1);
    expect(legit.requests).toHaveLength(3);
    expect(totalConnections()).toBe(1);
  });
});
