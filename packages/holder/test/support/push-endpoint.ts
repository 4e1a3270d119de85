/**
 * An agent's doorbell endpoint for the holder's push tests: node:http on loopback with the real
 * `@doorbell/webhooks` receiver (signature, ±300 s on the test's clock, webhook-id dedup, the
 * challenge answered only after the signature verifies). It records every verified doorbell, every
 * raw request and how many challenges it answered, and can be told to answer a status instead.
 * The forwarder's tests use it too (forwarder-harness.ts).
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createReceiver, generateSecret, toNodeHandler } from "@doorbell/webhooks";

export interface Doorbell {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  body: string;
  signature: string;
}

export async function startAgentEndpoint(clock: () => number = Date.now, secret = generateSecret()) {
  const doorbells: Doorbell[] = [];
  const requests: { body: string; headers: Record<string, unknown> }[] = [];
  const control = { status: 0, secrets: [secret], challenges: 0 };
  const receiver = createReceiver({
    keys: () => ({ secrets: control.secrets }),
    clock,
    onChallenge: () => {
      control.challenges++;
      return true;
    },
    handler(event) {
      const json = event.json as { type: string; timestamp: string; data: Record<string, unknown> };
      doorbells.push({
        id: event.id,
        type: json.type,
        timestamp: json.timestamp,
        data: json.data,
        body: Buffer.from(event.body).toString("utf8"),
        signature: event.headers.get("webhook-signature") ?? "",
      });
    },
  });
  const handle = toNodeHandler(receiver);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () =>
      requests.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers }),
    );
    if (control.status !== 0) {
      req.resume();
      req.on("end", () => res.writeHead(control.status).end());
      return;
    }
    handle(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/doorbell`,
    secret,
    doorbells,
    requests,
    control,
    of: (type: string) => doorbells.filter((doorbell) => doorbell.type === type),
    /** The type of every request that arrived, challenges (answered by the receiver) included. */
    types: () => requests.map((request) => (JSON.parse(request.body) as { type?: string }).type),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type AgentEndpoint = Awaited<ReturnType<typeof startAgentEndpoint>>;
