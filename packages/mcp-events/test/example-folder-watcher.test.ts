// examples/events-folder-watcher/server.ts as a user runs it: a child process watching a real
// folder, followed with the client SDK; a file written into the folder arrives as an event.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { EventsClient } from "../src/client/index.js";
import { connectHttp, take } from "./client-harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const SERVER = path.join(ROOT, "examples/events-folder-watcher/server.ts");

let child: ChildProcess | undefined;
let folder: string | undefined;
let events: EventsClient | undefined;
afterEach(async () => {
  await events?.close();
  child?.kill("SIGTERM");
  if (child && child.exitCode === null) await new Promise((resolve) => child?.once("exit", resolve));
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
  child = folder = events = undefined;
});

/** Starts the example on a free port and resolves with the endpoint it prints. */
async function startExample(dir: string): Promise<URL> {
  child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", SERVER, dir, "--port", "0"],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  return new Promise<URL>((resolve, reject) => {
    // A fresh process transpiles the workspace first: slow on a busy machine.
    const timer = setTimeout(() => reject(new Error(`the example did not start: ${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = /MCP Events endpoint (http:\/\/\S+)/.exec(output);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(new URL(found[1]));
      }
    };
    child?.stdout?.on("data", read);
    child?.stderr?.on("data", read);
    child?.once("exit", (code) => reject(new Error(`the example exited (${code}): ${output}`)));
  });
}

describe("the folder-watcher example", () => {
  it("a file written into the watched folder arrives as file.created with its name and size; a rewrite as file.changed", async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-watch-"));
    const url = await startExample(folder);
    // An SDK v2 Client, negotiating the era as a deployed client does.
    events = new EventsClient({ connect: () => connectHttp(url) });
    expect((await events.list()).map((type) => type.name)).toEqual(["file.created", "file.changed"]);
    const created = await events.subscribe("file.created", {}, { delivery: "push" });
    const changed = await events.subscribe("file.changed", { suffix: ".txt" }, { delivery: "poll" });
    // Let the push stream become active ("start from now") before the folder changes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Written elsewhere and renamed in, so the file appears whole: a file created empty and then
    // written is, rightly, file.created with size 0 and then file.changed.
    const staged = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "watcher-staging-")), "note.txt");
    fs.writeFileSync(staged, "hello");
    fs.renameSync(staged, path.join(folder, "note.txt"));
    const [event] = await take(created, 1, 10_000);
    expect(event).toMatchObject({ name: "file.created", data: { name: "note.txt", size: 5 } });
    fs.appendFileSync(path.join(folder, "note.txt"), ", world");
    // fs.watch may report the rename again (file.changed, size 5) before the append.
    let rewrite = (await take(changed, 1, 10_000))[0];
    if (rewrite?.data.size === 5) rewrite = (await take(changed, 1, 10_000))[0];
    expect(rewrite).toMatchObject({ name: "file.changed", data: { name: "note.txt", size: 12 } });
  }, 90_000);
});
