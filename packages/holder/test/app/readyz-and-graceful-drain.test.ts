// Issue #14 item 6: /readyz says whether a balancer should send this process traffic (database
// reachable, migrations done, not draining); close() (what SIGTERM runs) stops accepting, lets a
// request in flight finish, then stops.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolder } from "../../src/app/holder.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("ready while serving, 503 while draining; a request in flight still gets its answer", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-drain-"));
    const holder = await createHolder({
      database: (await engine.createDatabase()).url,
      dataDir,
      env: {},
      log: pino({ level: "silent" }),
      demo: false,
      events: false,
    });
    const { port } = await holder.listen(0, "127.0.0.1");
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });

    // A request in flight: headers sent, the body still coming.
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8");
    });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    const closing = holder.close();
    // Draining: not ready any more, and new connections are refused.
    expect((await holder.fetch(new Request(`http://127.0.0.1:${port}/readyz`))).status).toBe(503);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    socket.write(body.slice(5));
    const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await closing;
    await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 \d{3} /);
    socket.destroy();
  });
});
