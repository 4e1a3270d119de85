// `doorbell agent watch` against a real holder on loopback: flags checked before anything starts,
// matches printed from the holder's own list (title, price, location, url), doorbells asked for
// when it listens, the holder's refusal of an endpoint printed as it is, and the pull fallback.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningHolder, startHolder } from "../../agent/test/holder-fixture.js";
import { agentCommand } from "../src/commands/agent.js";
import { run } from "../src/main.js";
import { captureIo, runUntilChecked } from "./command-harness.js";

const dirs: string[] = [];
const statePath = () => {
  const dir = mkdtempSync(join(tmpdir(), "doorbell-cli-agent-"));
  dirs.push(dir);
  return join(dir, "agent-state.json");
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `watch` with the code in a flag, a doorbell endpoint on a free loopback port and a fresh state file. */
const listeningArgs = (mcpUrl: string, intentCode: string) => [
  "watch",
  "--holder",
  mcpUrl,
  "--code",
  intentCode,
  "--listen",
  "127.0.0.1:0",
  "--state",
  statePath(),
];

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs the command until `check` (given the output so far) is done. */
async function watching(
  args: string[],
  check: (out: () => string) => Promise<void>,
  env: Record<string, string> = {},
) {
  const t = captureIo(env);
  const { code, failure } = await runUntilChecked(
    (stopped, ready) => agentCommand(args, t.io, { until: stopped, onWatching: () => ready() }),
    () => check(t.out),
  );
  if (failure !== undefined)
    throw new Error(`${String(failure)}\n--- stdout\n${t.out()}\n--- stderr\n${t.err()}`);
  return { code, out: t.out(), err: t.err() };
}

describe("doorbell agent watch: refusals before anything starts", () => {
  it.each([
    [["agent"], /say doorbell agent watch/],
    [["agent", "listen"], /unknown agent action "listen"/],
    [["agent", "watch", "--code", "ic_x"], /--holder is required/],
    [["agent", "watch", "--holder", "http://127.0.0.1:1/mcp"], /--code or DOORBELL_INTENT_CODE/],
    [
      ["agent", "watch", "--holder", "http://127.0.0.1:1/mcp", "--code", "ic_x", "--listen", "8787"],
      /--listen is HOST:PORT/,
    ],
    [["agent", "watch", "--holder", "http://h/mcp", "--code", "ic_x", "--colour"], /Unknown option/],
  ])("%j exits 2 with a plain reason", async (args, reason) => {
    const t = captureIo();
    expect(await run(args, t.io)).toBe(2);
    expect(t.err()).toMatch(reason);
  });
});

describe("doorbell agent watch with a real holder", () => {
  let h: RunningHolder;
  beforeAll(async () => {
    h = await startHolder({ realClock: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("exits 1 with the holder's words for a code it does not know", async () => {
    const t = captureIo({ DOORBELL_INTENT_CODE: "ic_unknownCode000000000000" });
    const code = await run(["agent", "watch", "--holder", h.mcpUrl, "--state", statePath()], t.io);
    expect(code).toBe(1);
    expect(t.err()).toMatch(/no intent has this intentCode.*\(ERR_AGENT_NOT_FOUND\)/);
    expect(t.err()).not.toContain("ic_unknownCode");
  });

  it("prints the matches the holder lists, and reads every 15 minutes without an endpoint", async () => {
    const { intentCode, intentId } = await h.activeIntent();
    await h.addOffers(2);
    const result = await watching(
      ["watch", "--holder", h.mcpUrl, "--code", intentCode, "--state", statePath()],
      async (out) => {
        await until(() => (out().match(/new match:/g) ?? []).length >= 2, "two matches");
      },
    );
    expect(result.code).toBe(0);
    expect(result.out).toContain(`intent ${intentId}: active`);
    expect(result.out).toMatch(
      /none asked for \(no --listen or --endpoint-url\): reading matches every 15 minutes/,
    );
    expect(result.out).toMatch(
      /new match: Škoda Octavia Combi 2\.0 TDI #\d+ — 13,9\d\d EUR — SK-BL, SK — https:\/\/cars\.example\.sk\/octavia-\d+/,
    );
    expect(result.out).not.toContain(intentCode);
  });

  it("asks for doorbells on a loopback endpoint (a development holder calls it) and prints their state", async () => {
    const { intentCode } = await h.activeIntent();
    const args = ["watch", "--holder", h.mcpUrl, "--listen", "127.0.0.1:0", "--state", statePath(), "--test"];
    const result = await watching(
      args,
      async (out) => {
        await until(() => /doorbells: doorbells active until/.test(out()), "the doorbells to become active");
      },
      { DOORBELL_INTENT_CODE: intentCode },
    );
    expect(result.out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+; the holder offers doorbells/);
    // The holder may prove the endpoint while answering the call, or just after it.
    expect(result.out).toMatch(
      /doorbells: (waiting for the holder to verify this endpoint|doorbells active)/,
    );
  });

  it("waits for the person's approval when the call is not a test, and says how they get the link", async () => {
    const { intentCode } = await h.activeIntent();
    const args = listeningArgs(h.mcpUrl, intentCode);
    const result = await watching(args, async (out) => {
      await until(() => /approve notifications/.test(out()), "the approval line");
    });
    expect(result.out).toMatch(
      /doorbells: waiting for (the holder to verify|the person to approve notifications: the holder e-mailed them a link)/,
    );
  });
});

describe("doorbell agent watch with a production holder", () => {
  let h: RunningHolder;
  beforeAll(async () => {
    h = await startHolder({ realClock: true, webhookPolicy: "production" });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("prints the holder's refusal of a loopback http endpoint plainly and reads instead", async () => {
    const { intentCode } = await h.activeIntent();
    const args = listeningArgs(h.mcpUrl, intentCode);
    const t = captureIo();
    const { code } = await runUntilChecked(
      (stopped, ready) => agentCommand(args, t.io, { until: stopped, onWatching: () => ready() }),
      async () => {},
    );
    expect(code).toBe(0);
    expect(t.out()).toMatch(/doorbells: no doorbells: the holder refused: .*https/);
    expect(t.err()).toMatch(/the holder refused intent_subscribe_events: .*\(ERR_AGENT_/);
  });
});
