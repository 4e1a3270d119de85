/**
 * The state as one JSON file: each save writes a new file (mode 0600) beside it, fsyncs it and
 * renames it over the old one, so a crash leaves either the old state or the new one, never half.
 * A lock file beside it keeps a second process off the same state (two listeners would each
 * process a doorbell once, which is twice).
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { readPrivateFile, writeFileAtomically } from "@doorbell/webhooks";
import { AgentError } from "../errors.js";
import { type AgentState, agentStateSchema, emptyState } from "./schema.js";
import type { StateStore } from "./store.js";

const MODE = 0o600;

export async function createFileStateStore(file: string): Promise<StateStore> {
  const target = path.resolve(file);
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const unlock = await lock(`${target}.lock`);
  return {
    description: target,
    async load() {
      let text: string | undefined;
      try {
        // A state file others can read holds codes and secrets they should not have: set back to 0600.
        text = await readPrivateFile(target, { mode: MODE });
      } catch (error) {
        throw stateError(`cannot read the state file ${target}: ${(error as Error).message}`);
      }
      if (text === undefined) return emptyState();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw stateError(
          `the state file ${target} is not JSON; move it aside to start afresh (it holds intent codes and secrets)`,
        );
      }
      const parsed = agentStateSchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw stateError(
          `the state file ${target} is not a doorbell agent state (${issue?.path.join(".") || "top level"}: ${issue?.message ?? "invalid"})`,
        );
      }
      return parsed.data;
    },
    async save(state: AgentState) {
      try {
        await writeFileAtomically(target, `${JSON.stringify(state)}\n`, { mode: MODE });
      } catch (error) {
        throw stateError(`cannot write the state file ${target}: ${(error as Error).message}`);
      }
    },
    close: unlock,
  };
}

/** Takes `lockFile` for this process, taking over one left by a process that is gone. */
async function lock(lockFile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(lockFile, `${process.pid}\n`, { flag: "wx", mode: MODE });
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        await fs.rm(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw stateError(`cannot create the lock file ${lockFile}: ${(error as Error).message}`);
      }
      const holder = Number.parseInt(await fs.readFile(lockFile, "utf8").catch(() => ""), 10);
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw stateError(
          `another doorbell agent (process ${holder}) uses this state file; stop it or give another --state`,
        );
      }
      await fs.rm(lockFile, { force: true });
    }
  }
  throw stateError(`cannot take the lock file ${lockFile}`);
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const stateError = (message: string) => new AgentError("ERR_AGENT_STATE", message);
