// The mcp-handler example started as a user starts it (a process on a free port), an https
// receiver on loopback with the test certificate the example is told to trust, and the few
// requests the tests send to it.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { type Json, modernRequest } from "./interop-harness.js";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const SERVER = fileURLToPath(
  new URL("../../../examples/events-mcp-handler/server.ts", import.meta.url),
);
/** A self-signed certificate for 127.0.0.1 (CA:TRUE, valid to 2126), trusted only where passed. */
export const LOOPBACK_CA = fileURLToPath(new URL("./fixtures/loopback-cert.pem", import.meta.url));
const LOOPBACK_KEY = fileURLToPath(new URL("./fixtures/loopback-key.pem", import.meta.url));
export const AUTH = { authorization: "Bearer dev-token" };

export interface ExampleProcess {
  /** http://127.0.0.1:PORT/mcp */
  readonly url: string;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** Starts the example with these flags; resolves once it prints its endpoint. */
export async function startExampleProcess(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<ExampleProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", SERVER, "--port", "0", ...args],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  let output = "";
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  const url = await new Promise<string>((resolve, reject) => {
    // A fresh process transpiles the workspace first: slow on a busy machine.
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the example did not start: ${output}`));
    }, 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = /MCP Events example \(mcp-handler\) at (http:\/\/\S+)/.exec(output);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited (${code}): ${output}`));
    });
  });
  return { url, output: () => output, stop };
}

type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A server on https://127.0.0.1:PORT with the loopback certificate. */
async function listenHttps(listener: NodeListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpsServer(
    { cert: readFileSync(LOOPBACK_CA), key: readFileSync(LOOPBACK_KEY) },
    listener,
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fetch handler (a receiver) served over https on loopback. */
export const serveHttps = (fetch: (request: Request) => Promise<Response> | Response) =>
  listenHttps(getRequestListener(fetch));

/** A Node request listener served over https on loopback. */
export const serveHttpsNode = (listener: NodeListener) => listenHttps(listener);

let requestId = 1_000;

/** Calls the example's `place_order` tool as a 2026-07-28 client; resolves with the order id. */
export async function placeOrder(url: string, customer: string, item: string): Promise<string> {
  const { message } = await modernRequest(
    url,
    requestId++,
    "tools/call",
    { name: "place_order", arguments: { customer, item } },
    { ...AUTH, "mcp-name": "place_order" },
  );
  const result = message.result as { content?: { text?: string }[] } | undefined;
  const text = result?.content?.[0]?.text ?? "";
  const found = /^(order_\S+) placed/.exec(text);
  if (!found?.[1]) throw new Error(`place_order failed: ${JSON.stringify(message)}`);
  return found[1];
}

/** One events request as a 2026-07-28 client (the ChatGPT profile's shapes). */
export async function eventsRequest(
  url: string,
  method: string,
  params: Json,
  headers: Record<string, string> = AUTH,
): Promise<Json> {
  return (await modernRequest(url, requestId++, method, params, headers)).message;
}
