// examples/events-client/print.ts as a user runs it (a child process, the EventsClient on an SDK v2
// Client) against examples/events-check-function (SDK v2 `createMcpHandler`, 2026-07-28): an order
// placed through the server's tool is printed, by poll, push and webhook.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "@doorbell/store/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  createExampleApp,
  type ExampleApp,
  listenExample,
} from "../../../examples/events-check-function/server.js";
import { connectHttp } from "./client-harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const PRINT = "examples/events-client/print.ts";

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function startServer(): Promise<{ app: ExampleApp; url: string }> {
  const app = await createExampleApp({ allowLoopbackWebhooks: true, tuning: { pushIntervalMs: 60_000 } });
  const { url, server } = await listenExample(app);
  open.push(async () => {
    server.closeAllConnections();
    server.close();
    await app.close();
  });
  return { app, url };
}

/** Runs print.ts; `waitFor` resolves when its output (stdout and stderr) matches. */
function runPrint(args: string[]) {
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", PRINT, ...args],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const listeners = new Set<() => void>();
  const read = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", read);
  child.stderr?.on("data", read);
  open.push(async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  });
  return {
    waitFor(pattern: RegExp, ms = 60_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        };
        // A fresh process transpiles the workspace first: slow on a busy machine.
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no ${pattern} in the output: ${output.slice(-2_000)}`));
        }, ms);
        listeners.add(check);
        check();
      });
    },
  };
}

describe("the events-client example against the check-function example (2026-07-28)", () => {
  it.each(["poll", "push", "webhook"] as const)(
    "%s: an order placed through the server's tool is printed",
    async (mode) => {
      const { url } = await startServer();
      const listen = mode === "webhook" ? ["--listen", `127.0.0.1:${await freePort()}`] : [];
      const print = runPrint([
        "--url",
        url,
        "--mode",
        mode,
        "--event",
        "order.placed",
        "--token",
        "dev-token",
        ...listen,
      ]);
      await print.waitFor(new RegExp(`# order\\.placed: subscribed by ${mode}`));
      const client = await connectHttp(new URL(url));
      open.push(() => client.close());
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      await client.callTool({ name: "place_order", arguments: { customer: "ada", item: "a kettle" } });
      await print.waitFor(/order\.placed .*"item":"a kettle"/, 20_000);
    },
    90_000,
  );
});
