// What the command tests share: an Io that captures what a command prints, a free loopback port,
// and a long-running command run in-process until a check is done.
import { readFile } from "node:fs/promises";
import { serveCommand } from "../src/commands/serve.js";
import type { Io } from "../src/main.js";

export function captureIo(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    stdin: async () => new Uint8Array(),
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env,
    readFile: (path) => readFile(path),
    now: () => Date.now(),
    redirectedFileMode: () => undefined,
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

export { freePort } from "@doorbell/store/testing";

/**
 * Runs a long-running command: `start` passes `until` and `ready` to it (its control), `check`
 * runs once it is ready, and the command is told to stop when the check ends. Returns the exit
 * code and the check's failure, if any.
 */
export async function runUntilChecked<T = void>(
  start: (until: Promise<void>, ready: (value: T) => void) => Promise<number>,
  check: (value: T) => Promise<void>,
): Promise<{ code: number; failure: unknown }> {
  let stop: () => void = () => {};
  const until = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let failure: unknown;
  const code = await start(until, (value) => {
    check(value)
      .catch((error: unknown) => {
        failure = error;
      })
      .finally(() => stop());
  });
  return { code, failure };
}

/** Runs `doorbell serve` in-process until `check` is done; returns the exit code and the output. */
export async function serving(
  args: string[],
  check: (origin: string) => Promise<void>,
  env: Record<string, string> = {},
) {
  const t = captureIo(env);
  const { code, failure } = await runUntilChecked(
    (until, ready) =>
      serveCommand(args, t.io, { until, onListening: (_holder, address) => ready(address.port) }),
    (port: number) => check(`http://127.0.0.1:${port}`),
  );
  if (failure !== undefined) throw failure;
  return { code, out: t.out(), err: t.err() };
}
