// Loopback-only servers for the egress tests. Nothing here ever listens on or connects to a
// non-loopback address; every test name resolves through an injected resolver.
import { readFileSync } from "node:fs";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";
import { closeEgress, type EgressPolicy, type ResolvedAddress, type Resolver } from "../src/egress/index.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

/**
 * Self-signed certificate for hook.doorbell.test (CA:TRUE, valid 2000–2126), made once with
 * `openssl ca -selfsign` (recipe in docs/decisions.md). Trusted only by tests that pass it as `ca`.
 */
export const TEST_CERT = fixture("egress-test-cert.pem");
export const TEST_KEY = fixture("egress-test-key.pem");
export const TEST_HOST = "hook.doorbell.test";

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly localAddress: string | undefined;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface TestServer {
  readonly host: string;
  readonly port: number;
  /** TCP connections accepted (counted before any TLS or HTTP). */
  connections: number;
  /** Local addresses the connections arrived on: proves which address was dialled. */
  readonly connectionAddresses: string[];
  readonly requests: SeenRequest[];
  reset(): void;
  close(): Promise<void>;
}

const listen = (server: net.Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });

const track = (server: net.Server, host: string, handlerless = false) => {
  const sockets = new Set<net.Socket>();
  const state: TestServer = {
    host,
    port: 0,
    connections: 0,
    connectionAddresses: [],
    requests: [],
    reset() {
      state.connections = 0;
      state.connectionAddresses.length = 0;
      state.requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  // tls.Server and http.Server both emit "connection" for the raw TCP socket.
  server.on("connection", (socket: net.Socket) => {
    state.connections += 1;
    state.connectionAddresses.push(socket.localAddress ?? "");
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    if (handlerless) socket.destroy();
  });

  return state;
};

const withHandler = (state: TestServer, handler: Handler) => (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const seen: SeenRequest = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks),
      localAddress: req.socket.localAddress,
    };
    state.requests.push(seen);
    handler(req, res, seen);
  });
};

export const okHandler: Handler = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end('{"ok":true}');
};

/** HTTPS with the test certificate (or http with `tls: false`) on one loopback address. */
export const startServer = async (
  options: { host: string; port?: number; tls?: boolean; handler?: Handler } = { host: "127.0.0.2" },
): Promise<TestServer> => {
  const server =
    options.tls === false ? http.createServer() : https.createServer({ cert: TEST_CERT, key: TEST_KEY });
  const state = track(server, options.host);
  server.on("request", withHandler(state, options.handler ?? okHandler));
  await listen(server, options.port ?? 0, options.host);
  return Object.assign(state, { port: (server.address() as AddressInfo).port });
};

/** A honeypot: counts TCP connections and closes them at once. */
export const startHoneypot = async (host: string, port = 0): Promise<TestServer> => {
  const server = net.createServer();
  const state = track(server, host, true);
  await listen(server, port, host);
  return Object.assign(state, { port: (server.address() as AddressInfo).port });
};

/** A port on which nothing listens (bound, then released). */
export const closedPort = async (host: string): Promise<number> => {
  const server = net.createServer();
  await listen(server, 0, host);
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

/** A resolver whose answers the test sets, and which counts how often it is asked. */
export const scriptedResolver = () => {
  const state = {
    calls: [] as string[],
    answers: (_host: string, _call: number): string[] => [],
    resolver: (async (hostname: string) => {
      state.calls.push(hostname);
      return state
        .answers(hostname, state.calls.length)
        .map((address): ResolvedAddress => ({ address, family: net.isIP(address) }));
    }) as Resolver,
    answer(addresses: string[]) {
      state.answers = () => addresses;
    },
  };
  return state;
};

export const bytes = (text: string) => new TextEncoder().encode(text);

/**
 * The set-up the getJson and postWebhook tests share, with its hooks registered (call it at the
 * top of a test file): a honeypot on 127.0.0.1, a scripted resolver, servers closed after all
 * cases, and the policies kept with `keep` closed after each case.
 */
export const egressTestBed = () => {
  const dns = scriptedResolver();
  const started: TestServer[] = [];
  const policies: EgressPolicy[] = [];
  const bed = {
    dns,
    policies,
    /** Counts connections to 127.0.0.1; started before the first case. */
    honeypot: undefined as unknown as TestServer,
    /** Starts a loopback server that is closed after all cases. */
    serve: async (options: Parameters<typeof startServer>[0]) => {
      const server = await startServer(options);
      started.push(server);
      return server;
    },
    /** Closes the policy (its connection pool) after the case. */
    keep: (policy: EgressPolicy) => {
      policies.push(policy);
      return policy;
    },
  };
  beforeAll(async () => {
    bed.honeypot = await startHoneypot("127.0.0.1");
    started.push(bed.honeypot);
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.close()));
  });
  afterEach(async () => {
    await Promise.all(policies.splice(0).map(closeEgress));
    bed.honeypot.reset();
    dns.calls.length = 0;
  });
  return bed;
};
