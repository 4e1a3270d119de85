// The two layers below postWebhook, each proven alone: the vetted `lookup` (Node's Happy
// Eyeballs contract included) and the post-connect check of socket.remoteAddress.
import type { LookupAddress } from "node:dns";
import net, { type LookupFunction } from "node:net";
import { Agent, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { guardedConnector } from "../src/egress/connector.js";
import { developmentPolicy, productionPolicy } from "../src/egress/index.js";
import { resolveVetted, vettedLookup } from "../src/egress/lookup.js";
import { EgressRefusal, ResolutionFailure } from "../src/egress/refusal.js";
import { scriptedResolver, startServer, TEST_CERT, TEST_HOST, type TestServer } from "./egress-helpers.js";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

type Answer = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number };
const callLookup = (lookup: LookupFunction, options: { all?: boolean; family?: number }) =>
  new Promise<Answer>((resolve) => {
    lookup(TEST_HOST, options, (error, address, family) => resolve({ error, address, family }));
  });

describe("vettedLookup", () => {
  const dns = scriptedResolver();
  const policy = productionPolicy({ resolver: dns.resolver, allowSubnets: ["127.0.0.2/32", "::1/128"] });

  it("answers Happy Eyeballs (all: true) with the array form Node requires", async () => {
    dns.answer(["127.0.0.2", "::1"]);
    const answer = await callLookup(vettedLookup(policy), { all: true });
    expect(answer.error).toBeNull();
    expect(answer.address).toEqual([
      { address: "127.0.0.2", family: 4 },
      { address: "::1", family: 6 },
    ]);
  });

  it("answers the three-argument form when all is false, honouring the family", async () => {
    dns.answer(["127.0.0.2", "::1"]);
    expect(await callLookup(vettedLookup(policy), {})).toEqual({
      error: null,
      address: "127.0.0.2",
      family: 4,
    });
    expect(await callLookup(vettedLookup(policy), { family: 6 })).toEqual({
      error: null,
      address: "::1",
      family: 6,
    });
  });

  it("recomputes the family and canonical text instead of trusting the resolver", async () => {
    const lying = async () => [{ address: "::FFFF:127.0.0.2", family: 4 }];
    const vetted = await resolveVetted(
      productionPolicy({ resolver: lying, allowSubnets: ["127.0.0.2/32"] }),
      "x.test",
    );
    expect(vetted).toEqual([{ address: "::ffff:127.0.0.2", family: 6 }]);
  });

  it("refuses the whole name when any one answer is refused", async () => {
    dns.answer(["127.0.0.2", "127.0.0.1"]);
    const answer = await callLookup(vettedLookup(policy), { all: true });
    expect(answer.error).toBeInstanceOf(EgressRefusal);
    expect((answer.error as EgressRefusal).category).toBe("blocked_address");
    expect((answer.error as EgressRefusal).code).toBe("ERR_EGRESS_POLICY");
  });

  it("reports resolver failures and empty answers as resolution failures", async () => {
    const failing = productionPolicy({
      resolver: async () => {
        throw Object.assign(new Error("SERVFAIL from upstream with private detail"), { code: "EAI_AGAIN" });
      },
    });
    const failed = await callLookup(vettedLookup(failing), { all: true });
    expect(failed.error).toBeInstanceOf(ResolutionFailure);
    expect(failed.error?.code).toBe("EAI_AGAIN");
    expect(failed.error?.message).not.toContain("private detail");

    dns.answer([]);
    const empty = await callLookup(vettedLookup(policy), { all: true });
    expect(empty.error?.code).toBe("ENOTFOUND");
  });

  it("works under net.connect's Happy Eyeballs: falls back from a dead ::1 to 127.0.0.1", async () => {
    // The ERR_INVALID_IP_ADDRESS trap (reference §4.1) would fail this connect.
    const server = await startServer({ host: "127.0.0.1", tls: false });
    cleanup.push(() => server.close());
    const dev = developmentPolicy({
      resolver: async () => [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ],
    });
    const socket = net.connect({
      host: TEST_HOST,
      port: server.port,
      lookup: vettedLookup(dev),
      autoSelectFamily: true,
    });
    const remote = await new Promise<string | undefined>((resolve, reject) => {
      socket.once("connect", () => resolve(socket.remoteAddress));
      socket.once("error", reject);
    });
    socket.destroy();
    expect(remote).toBe("127.0.0.1");
  });
});

describe("guardedConnector: the post-connect check alone", () => {
  // A lookup that vets nothing, standing in for any way a bad address could slip past layer one.
  const unvetted: LookupFunction = ((
    _host: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
  }) as LookupFunction;

  const run = async (server: TestServer, lookup: LookupFunction | undefined) => {
    const policy = productionPolicy({ port: server.port, ca: TEST_CERT, resolver: async () => [] });
    const agent = new Agent({ connect: guardedConnector(policy, lookup) });
    cleanup.push(() => agent.destroy());
    return request(`https://${TEST_HOST}:${server.port}/hook`, {
      method: "POST",
      body: "{}",
      dispatcher: agent,
    }).then(
      (response) => response.statusCode,
      (error: unknown) => error,
    );
  };

  it("destroys a socket whose remote address is refused, before any HTTP request", async () => {
    const server = await startServer({ host: "127.0.0.1" });
    cleanup.push(() => server.close());
    const outcome = await run(server, unvetted);
    expect(outcome).toBeInstanceOf(EgressRefusal);
    expect((outcome as EgressRefusal).category).toBe("blocked_address");
    expect((outcome as EgressRefusal).message).not.toContain("127.0.0.1");
    expect(server.connections).toBe(1); // the TCP handshake is why this is only the second layer
    expect(server.requests).toHaveLength(0);
  });

  it("refuses at TCP connect, not after TLS: a server that never speaks TLS cannot stall it", async () => {
    // A silent TCP server: if the check waited for the TLS handshake, this would time out.
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanup.push(async () => {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { port } = silent.address() as net.AddressInfo;
    const policy = productionPolicy({ port, ca: TEST_CERT, timeoutMs: 5000 });
    const agent = new Agent({ connect: guardedConnector(policy, unvetted) });
    cleanup.push(() => agent.destroy());
    const started = performance.now();
    const outcome = await request(`https://${TEST_HOST}:${port}/`, {
      method: "POST",
      dispatcher: agent,
    }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(EgressRefusal);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(held).toHaveLength(1);
  });

  it("is the layer that matters: the same server is reachable when the policy allows it", async () => {
    const server = await startServer({ host: "127.0.0.1" });
    cleanup.push(() => server.close());
    const policy = developmentPolicy({ ca: TEST_CERT });
    const agent = new Agent({ connect: guardedConnector(policy, unvetted) });
    cleanup.push(() => agent.destroy());
    const response = await request(`https://${TEST_HOST}:${server.port}/hook`, {
      method: "POST",
      body: "{}",
      dispatcher: agent,
    });
    await response.body.dump();
    expect(response.statusCode).toBe(200);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses IP literals itself, because Node never calls lookup for them", async () => {
    const server = await startServer({ host: "127.0.0.1" });
    cleanup.push(() => server.close());
    const policy = productionPolicy({ port: server.port, ca: TEST_CERT });
    const agent = new Agent({ connect: guardedConnector(policy) });
    cleanup.push(() => agent.destroy());
    const outcome = await request(`https://127.0.0.1:${server.port}/`, {
      method: "POST",
      dispatcher: agent,
    }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(EgressRefusal);
    expect((outcome as EgressRefusal).category).toBe("blocked_url");
    expect(server.connections).toBe(0);
  });
});
