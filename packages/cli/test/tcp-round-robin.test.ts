// The TCP balancer the soak puts in front of its holders: connections alternate, a dead upstream
// is skipped, requests on one kept-alive connection stay with its upstream, and each upstream sees
// the client's own address.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { expect, it } from "vitest";
import { freePort } from "./command-harness.js";
import { startTcpRoundRobin } from "./tcp-round-robin.js";

async function upstream(name: string) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ name, peer: req.socket.remoteAddress, body: Buffer.concat(chunks).toString() }),
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

it("alternates connections, skips a dead upstream, keeps a connection's requests together, shows each client's address", async () => {
  const a = await upstream("a");
  const b = await upstream("b");
  const balancer = await startTcpRoundRobin([a.port, await freePort(), b.port]);
  // One connection each: every request of a client rides its one kept-alive connection.
  const agents = ["127.0.0.2", "127.0.0.3"].map(
    (localAddress) => new Agent({ localAddress, connections: 1 }),
  );
  try {
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await request(`${balancer.url}/x`, {
        method: "POST",
        body: `hello ${i}`,
        dispatcher: agents[i % 2] as Agent,
      });
      expect(answer.statusCode).toBe(200);
      const json = (await answer.body.json()) as { name: string; peer: string; body: string };
      expect(json.body).toBe(`hello ${i}`);
      expect(json.peer).toBe(i % 2 === 0 ? "127.0.0.2" : "127.0.0.3");
      seen.push(json.name);
    }
    // The first client's connection went to a, the second's skipped the dead upstream for b.
    expect(seen).toEqual(["a", "b", "a", "b", "a", "b"]);
    expect(balancer.connections).toEqual([1, 0, 1]);
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
    await balancer.close();
    a.server.close();
    b.server.close();
  }
});
