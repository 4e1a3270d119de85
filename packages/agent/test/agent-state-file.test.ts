// The state file: written whole or not at all (a new file renamed over the old), mode 0600
// because it holds codes and secrets, one process at a time, and a clear refusal when damaged.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentError, createFileStateStore, emptyState, StateBox } from "../src/index.js";
import { stateWithSubscription } from "./listener-fixture.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "doorbell-agent-state-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("agent state file", () => {
  it("starts empty, saves with mode 0600 and leaves no temporary file behind", async () => {
    const file = join(tempDir(), "nested", "state.json");
    const store = await createFileStateStore(file);
    expect(await store.load()).toEqual(emptyState());
    const state = stateWithSubscription();
    await store.save(state);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(file, "..")).sort()).toEqual(["state.json", "state.json.lock"]);
    expect(await store.load()).toEqual(state);
    await store.close?.();
  });

  it("writes every commit in order, the last state winning", async () => {
    const file = join(tempDir(), "state.json");
    const box = await StateBox.open(await createFileStateStore(file));
    const commits: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      box.state.seen[`msg_${i}`] = i;
      commits.push(box.commit());
    }
    await Promise.all(commits);
    await box.close();
    const reopened = await createFileStateStore(file);
    expect(Object.keys((await reopened.load()).seen)).toHaveLength(20);
    await reopened.close?.();
  });

  it("refuses a second user of the same file while the first holds it", async () => {
    const file = join(tempDir(), "state.json");
    const first = await createFileStateStore(file);
    await expect(createFileStateStore(file)).rejects.toThrow(
      /another doorbell agent \(process \d+\) uses this state file/,
    );
    await first.close?.();
    const again = await createFileStateStore(file);
    await again.close?.();
  });

  it("takes over the lock of a process that is gone", async () => {
    const file = join(tempDir(), "state.json");
    writeFileSync(`${file}.lock`, "999999999\n");
    const store = await createFileStateStore(file);
    await store.close?.();
  });

  it.each([
    ["not JSON", "{ half", /is not JSON; move it aside/],
    ["another shape", JSON.stringify({ version: 7 }), /is not a doorbell agent state \(version/],
  ])("refuses a file that is %s with ERR_AGENT_STATE", async (_what, content, message) => {
    const file = join(tempDir(), "state.json");
    writeFileSync(file, content);
    const store = await createFileStateStore(file);
    const error = await store.load().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe("ERR_AGENT_STATE");
    expect((error as AgentError).message).toMatch(message);
    await store.close?.();
  });
});
