import { fstatSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { CodedError, type CodedErrorOptions } from "@doorbell/errors";
import { forTerminal } from "./terminal-text.js";

/** Where a command reads and writes; injected so commands are tested in-process. */
export interface Io {
  stdin: () => Promise<Uint8Array>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => Promise<Uint8Array>;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** The permission bits of the file stdin (0) or stdout (1) is redirected to; undefined when not a file. */
  redirectedFileMode: (fd: 0 | 1) => number | undefined;
}

export const processIo: Io = {
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  },
  // Every command's output: none prints control characters of its own (no colours), so any there
  // came from outside, and is shown escaped.
  stdout: (text) => process.stdout.write(forTerminal(text)),
  stderr: (text) => process.stderr.write(forTerminal(text)),
  env: process.env,
  readFile: (path) => readFile(path),
  now: () => Date.now(),
  redirectedFileMode: (fd) => {
    try {
      const stat = fstatSync(fd);
      return stat.isFile() ? stat.mode & 0o777 : undefined;
    } catch {
      return undefined; // closed
    }
  },
};

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends CodedError<"ERR_CLI_USAGE"> {
  override readonly name = "UsageError";

  constructor(message: string, options?: CodedErrorOptions) {
    super("ERR_CLI_USAGE", message, options);
  }
}
