// The balancers the multi-process tests and the soak script put in front of several holders
// (issue #14). The HTTP proxy: requests alternate with no stickiness, a dead upstream is skipped,
// bodies and streamed answers pass through, and X-Forwarded-For carries each client's own address.
// The TCP balancer: connections alternate, a dead upstream is skipped, requests on one kept-alive
// connection stay with its upstream, and each upstream sees the client's own address.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { expect, it } from "vitest";
import { freePort } from "./command-harness.js";
import { startRoundRobinProxy } from "./round-robin-proxy.js";
import { startTcpRoundRobin } from "./tcp-round-robin.js";

interface Echo {
  name: string;
  forwarded: string | null;
  peer: string;
  body: string;
}

async function upstream(name: string) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      // Written in two pieces: the proxy streams, it does not wait for the whole answer.
      res.write(`{"name":"${name}",`);
      res.end(
        `"forwarded":${JSON.stringify(req.headers["x-forwarded-for"] ?? null)},"peer":"${req.socket.remoteAddress}","body":${JSON.stringify(Buffer.concat(chunks).toString())}}`,
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return { server, port, origin: `http://127.0.0.1:${port}` };
}

/**
 * Upstreams a and b with a dead port between them, and two clients from their own addresses
 * (one connection each). Sends six POSTs through the balancer `start` makes, alternating clients,
 * and answers what each upstream echoed; then closes everything.
 */
async function sixThrough<B extends { url: string; close(): Promise<void> }>(
  start: (upstreams: { port: number; origin: string }[]) => Promise<B>,
  check: (balancer: B) => void,
): Promise<Echo[]> {
  const a = await upstream("a");
  const b = await upstream("b");
  const deadPort = await freePort();
  const balancer = await start([a, { port: deadPort, origin: `http://127.0.0.1:${deadPort}` }, b]);
  const agents = ["127.0.0.2", "127.0.0.3"].map(
    (localAddress) => new Agent({ localAddress, connections: 1 }),
  );
  try {
    const echoes: Echo[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await request(`${balancer.url}/x`, {
        method: "POST",
        body: `hello ${i}`,
        dispatcher: agents[i % 2] as Agent,
      });
      expect(answer.statusCode).toBe(200);
      const echo = (await answer.body.json()) as Echo;
      expect(echo.body).toBe(`hello ${i}`);
      echoes.push(echo);
    }
    check(balancer);
    return echoes;
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
    await balancer.close();
    a.server.close();
    b.server.close();
  }
}

const clientOf = (i: number) => (i % 2 === 0 ? "127.0.0.2" : "127.0.0.3");

it("the HTTP proxy alternates requests, skips a dead upstream, passes bodies and each client's address", async () => {
  const echoes = await sixThrough(
    (upstreams) => startRoundRobinProxy(upstreams.map((one) => one.origin)),
    (proxy) => {
      expect(proxy.answered).toEqual([3, 0, 3]);
      expect(proxy.refused).toEqual([0, 3, 0]);
    },
  );
  expect(echoes.map((echo) => echo.name)).toEqual(["a", "b", "a", "b", "a", "b"]);
  expect(echoes.map((echo) => echo.forwarded)).toEqual(echoes.map((_, i) => clientOf(i)));
});

it("the TCP balancer alternates connections, skips a dead upstream, keeps a connection's requests together, shows each client's address", async () => {
  const echoes = await sixThrough(
    (upstreams) => startTcpRoundRobin(upstreams.map((one) => one.port)),
    (balancer) => expect(balancer.connections).toEqual([1, 0, 1]),
  );
  // The first client's connection went to a, the second's skipped the dead upstream for b.
  expect(echoes.map((echo) => echo.name)).toEqual(["a", "b", "a", "b", "a", "b"]);
  expect(echoes.map((echo) => echo.peer)).toEqual(echoes.map((_, i) => clientOf(i)));
  expect(echoes.map((echo) => echo.forwarded)).toEqual(echoes.map(() => null));
});
