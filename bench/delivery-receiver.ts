/**
 * The loopback receiver of the delivery benchmark, run in a worker thread so that its work does
 * not share an event loop with the engine under test. It answers every POST with 200 at once,
 * echoes challenges, and for each benchmark run (data.r) counts distinct events (data.i), duplicates,
 * per-subscription order breaks (data.s, data.k) and the latency from data.t (sender's clock,
 * `clockMs()`) to receipt.
 */
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort } from "node:worker_threads";

/**
 * Loopback addresses the receiver answers on (127.0.0.1 …): 64 subscriptions over 8 hosts keep
 * each host within the worker's default per-host cap, as many agents' endpoints would be.
 */
export const RECEIVER_HOSTS = 8;

/** Milliseconds on the process-wide monotonic clock: the same in every thread of the process. */
export function clockMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

export interface ExpectMessage {
  kind: "expect";
  /** The run's tag (data.r): receipts of any other run are ignored. */
  r: number;
  /** How many distinct events (data.i = 0 … n-1) make the run complete. */
  n: number;
}

export interface RunReport {
  kind: "done";
  received: number;
  duplicates: number;
  orderBreaks: number;
  /** Latency of each event's first receipt, in ms, indexed by data.i. */
  latencies: Float64Array;
  firstAt: number;
  lastAt: number;
}

interface EventData {
  r?: number;
  i?: number;
  s?: number;
  k?: number;
  t?: number;
  challenge?: string;
}

interface Run {
  r: number;
  n: number;
  seen: Uint8Array;
  unique: number;
  received: number;
  duplicates: number;
  orderBreaks: number;
  lastK: Map<number, number>;
  latencies: Float64Array;
  firstAt: number;
  lastAt: number;
}

let run: Run | undefined;

function record(data: EventData, at: number): void {
  const current = run;
  if (!current || data.r !== current.r || typeof data.i !== "number" || data.i < 0 || data.i >= current.n) {
    return;
  }
  current.received++;
  if (current.received === 1) current.firstAt = at;
  current.lastAt = at;
  if (current.seen[data.i] === 1) {
    current.duplicates++;
    return;
  }
  current.seen[data.i] = 1;
  current.unique++;
  current.latencies[data.i] = at - (data.t ?? at);
  if (typeof data.s === "number" && typeof data.k === "number") {
    const last = current.lastK.get(data.s) ?? -1;
    if (data.k < last) current.orderBreaks++;
    current.lastK.set(data.s, data.k);
  }
  if (current.unique === current.n) {
    run = undefined;
    const report: RunReport = {
      kind: "done",
      received: current.received,
      duplicates: current.duplicates,
      orderBreaks: current.orderBreaks,
      latencies: current.latencies,
      firstAt: current.firstAt,
      lastAt: current.lastAt,
    };
    parentPort?.postMessage(report, [current.latencies.buffer as ArrayBuffer]);
  }
}

if (parentPort) {
  const port = parentPort;
  const handle: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = clockMs();
      let envelope: { type?: string; data?: EventData };
      try {
        envelope = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof envelope;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const data = envelope.data ?? {};
      if (envelope.type === "subscription.verification" && typeof data.challenge === "string") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ challenge: data.challenge }));
        return;
      }
      res.writeHead(200, { "content-length": "0" }).end();
      record(data, at);
    });
  };
  const server = createServer({ keepAliveTimeout: 60_000 }, handle);
  const servers = [server];
  // The same server on RECEIVER_HOSTS loopback addresses and one port: the subscriptions are
  // spread over as many hosts, as agents on a marketplace are.
  server.listen(0, "127.0.0.1", () => {
    const { port: listening } = server.address() as AddressInfo;
    const others = Array.from({ length: RECEIVER_HOSTS - 1 }, (_, i) => `127.0.0.${i + 2}`);
    let pending = others.length;
    if (pending === 0) port.postMessage({ kind: "listening", port: listening });
    for (const host of others) {
      const more = createServer({ keepAliveTimeout: 60_000 }, handle);
      servers.push(more);
      more.listen(listening, host, () => {
        pending -= 1;
        if (pending === 0) port.postMessage({ kind: "listening", port: listening });
      });
    }
  });
  port.on("message", (message: ExpectMessage | { kind: "status" } | { kind: "close" }) => {
    if (message.kind === "status") {
      port.postMessage({ kind: "status", unique: run?.unique ?? 0, received: run?.received ?? 0 });
    } else if (message.kind === "expect") {
      run = {
        r: message.r,
        n: message.n,
        seen: new Uint8Array(message.n),
        unique: 0,
        received: 0,
        duplicates: 0,
        orderBreaks: 0,
        lastK: new Map(),
        latencies: new Float64Array(message.n),
        firstAt: 0,
        lastAt: 0,
      };
    } else {
      let open = servers.length;
      for (const each of servers) {
        each.closeAllConnections();
        each.close(() => {
          open -= 1;
          if (open === 0) port.close();
        });
      }
    }
  });
}
