// The round-robin proxy the multi-process tests and the soak script put in front of several
// holders (issue #14): requests alternate with no stickiness, a dead upstream is skipped, bodies
// and streamed answers pass through, and X-Forwarded-For carries each client's own address.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { expect, it } from "vitest";
import { freePort } from "./command-harness.js";
import { startRoundRobinProxy } from "./round-robin-proxy.js";

async function upstream(name: string) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      // Written in two pieces: the proxy streams, it does not wait for the whole answer.
      res.write(`{"name":"${name}",`);
      res.end(
        `"forwarded":${JSON.stringify(req.headers["x-forwarded-for"] ?? null)},"body":${JSON.stringify(Buffer.concat(chunks).toString())}}`,
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

it("alternates, skips a dead upstream, passes bodies and each client's address", async () => {
  const a = await upstream("a");
  const b = await upstream("b");
  const dead = `http://127.0.0.1:${await freePort()}`;
  const proxy = await startRoundRobinProxy([a.origin, dead, b.origin]);
  const agents = [new Agent({ localAddress: "127.0.0.2" }), new Agent({ localAddress: "127.0.0.3" })];
  try {
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const agent = agents[i % 2] as Agent;
      const answer = await request(`${proxy.url}/x`, {
        method: "POST",
        body: `hello ${i}`,
        dispatcher: agent,
      });
      expect(answer.statusCode).toBe(200);
      const json = (await answer.body.json()) as { name: string; forwarded: string; body: string };
      expect(json.body).toBe(`hello ${i}`);
      expect(json.forwarded).toBe(i % 2 === 0 ? "127.0.0.2" : "127.0.0.3");
      names.push(json.name);
    }
    expect(names).toEqual(["a", "b", "a", "b", "a", "b"]);
    expect(proxy.answered).toEqual([3, 0, 3]);
    expect(proxy.refused).toEqual([0, 3, 0]);
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
    await proxy.close();
    a.server.close();
    b.server.close();
  }
});
