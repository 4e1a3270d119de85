/**
 * The life of a long-running command (serve, forwarder, agent watch): its flags parsed once, its
 * port and the public URL guessed from it, listening (closing again if that fails), the summary
 * table, and running until told to stop (SIGINT or SIGTERM by default).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type Io, UsageError } from "../io.js";
import { ENV } from "./holder-config.js";

type Flags = NonNullable<ParseArgsConfig["options"]>;
type FlagValues<T extends Flags> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: false; strict: true }>
>["values"];

type FlagsAndPositionals<T extends Flags> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

/**
 * `doorbell <command> <action> [flags] [ids]`: the action (one of `actions`), then flags and
 * positionals; a missing or unknown action, or a mistake in the flags, is a usage error.
 */
export function parseSubcommand<A extends string, T extends Flags>(
  args: readonly string[],
  command: string,
  actions: readonly A[],
  options: T,
): { action: A } & FlagsAndPositionals<T> {
  const [action, ...rest] = args;
  if (!actions.includes(action as A)) {
    const listed = `${actions.slice(0, -1).join(", ")} or ${actions.at(-1)}`;
    throw new UsageError(
      action === undefined
        ? `say doorbell ${command} ${listed}`
        : `unknown ${command} action ${JSON.stringify(action)}`,
    );
  }
  try {
    return {
      action: action as A,
      ...parseArgs({ args: rest, options, allowPositionals: true, strict: true }),
    };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Named flags only; a mistake in them is a usage error. */
export function parseFlags<T extends Flags>(args: readonly string[], options: T): FlagValues<T> {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export interface ListenFlags {
  port: number;
  host: string;
  /** The public URL to use when none is given: `http://<host>:<port>`. */
  guessedUrl: string;
}

/** `--port` (default `defaultPort`) and `--host` (default 127.0.0.1); port 0 needs a public URL. */
export function listenFlags(
  values: { port?: string | undefined; host?: string | undefined; "public-url"?: string | undefined },
  io: Io,
  defaultPort: number,
): ListenFlags {
  const port = parsePort(values.port, defaultPort);
  const host = values.host?.trim() || "127.0.0.1";
  const shownHost =
    host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  if (port === 0 && values["public-url"] === undefined && io.env[ENV.publicUrl] === undefined) {
    throw new UsageError(
      "--port 0 picks a free port, so the public URL cannot be guessed: give --public-url too",
    );
  }
  return { port, host, guessedUrl: `http://${shownHost}:${port}` };
}

function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value) || n > 65_535)
    throw new UsageError(`--port is a number from 0 to 65535, not ${JSON.stringify(value)}`);
  return n;
}

/** `--webhook-policy`: production, development or not given. */
export function webhookPolicyFlag(value: string | undefined): "production" | "development" | undefined {
  if (value !== undefined && value !== "production" && value !== "development") {
    throw new UsageError(`--webhook-policy is production or development, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** Listens, or closes what was built and rethrows (a port in use, an address not ours). */
export async function listenOrClose<A>(
  service: { listen(port: number, host: string): Promise<A>; close(): Promise<void> },
  flags: ListenFlags,
): Promise<A> {
  try {
    return await service.listen(flags.port, flags.host);
  } catch (error) {
    await service.close();
    throw error;
  }
}

/** The summary a server prints once it listens: a title, aligned rows and where to connect. */
export function printSummary(io: Io, title: string, rows: readonly [string, string][], mcpUrl: string): void {
  const width = Math.max(...rows.map(([name]) => name.length)) + 1;
  io.stdout(
    `${title}\n${rows
      .map(([name, value]) => `  ${name.padEnd(width)} ${value}`)
      .join("\n")}\n\nConnect an MCP client (Streamable HTTP) to ${mcpUrl}. Ctrl+C stops.\n`,
  );
}

/** Waits until `until` resolves (default: SIGINT or SIGTERM), then says it stops. */
export async function untilStopped(io: Io, until: Promise<unknown> | undefined): Promise<void> {
  await (until ?? stopSignal());
  io.stdout("stopping… (a second Ctrl+C stops at once)\n");
}

/**
 * How long a signalled process may take to stop: the drain (requests in flight, then the
 * deliveries in hand, each bounded by its own timeout) fits well inside it.
 */
export const STOP_DEADLINE_MS = 30_000;

/**
 * Resolves on the first SIGINT or SIGTERM; a second one gets Node's default and ends the process.
 * From the first one on, a process that has not ended within STOP_DEADLINE_MS (something still
 * holds the event loop) says what holds it and exits with 1, instead of hanging.
 */
export function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      setTimeout(() => {
        const holding = [...new Set(process.getActiveResourcesInfo())].join(", ") || "nothing known";
        process.stderr.write(
          `doorbell: still not stopped ${STOP_DEADLINE_MS / 1000} s after the signal (holding on: ${holding}); exiting\n`,
        );
        process.exit(1);
      }, STOP_DEADLINE_MS).unref();
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
