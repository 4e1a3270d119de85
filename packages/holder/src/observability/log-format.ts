/**
 * The holder's log lines: JSON, one object per line, in production (for a log
 * collector), and a readable line for a person at a terminal in development:
 *
 *   14:03:07.412 INFO  http      GET /consent/:token 200 3.1 ms
 *   14:03:09.020 WARN  delivery  delivery attempt failed  category=http_5xx status=503 attempt=2
 *
 * Both are made from the same pino record, so nothing reaches one format that the other lacks.
 */
import { type Logger, pino } from "pino";

export type LogFormat = "pretty" | "json";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export const LOG_FORMAT_ENV = "DOORBELL_LOG_FORMAT";

/**
 * DOORBELL_LOG_FORMAT when set (pretty or json); otherwise JSON under NODE_ENV=production or when
 * the lines do not go to a terminal, readable when they do.
 */
export function chooseLogFormat(
  env: Readonly<Record<string, string | undefined>>,
  toTerminal: boolean,
): LogFormat {
  const asked = env[LOG_FORMAT_ENV]?.trim();
  if (asked !== undefined && asked !== "") {
    if (asked !== "pretty" && asked !== "json") {
      throw new RangeError(`${LOG_FORMAT_ENV} is pretty or json, not ${JSON.stringify(asked)}`);
    }
    return asked;
  }
  if (env.NODE_ENV === "production") return "json";
  return toTerminal ? "pretty" : "json";
}

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

/** Fields shown in the line's fixed places, not again as key=value. */
const PLACED = new Set(["time", "level", "msg", "component", "pid", "hostname", "event"]);

/** One pino JSON line as a readable line (a line that is not JSON passes through unchanged). */
export function prettyLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  if (record === null || typeof record !== "object") return jsonLine;
  const time = typeof record.time === "number" ? new Date(record.time).toISOString().slice(11, 23) : "";
  const level = (LEVELS[Number(record.level)] ?? String(record.level ?? "")).padEnd(5);
  const component = typeof record.component === "string" ? record.component.padEnd(9) : "".padEnd(9);
  const msg = typeof record.msg === "string" ? record.msg : "";
  // An access line says everything in its message; other lines add their fields.
  const fields =
    record.event === "http.request"
      ? []
      : Object.entries(record)
          .filter(([key]) => !PLACED.has(key))
          .map(([key, value]) => `${key}=${shown(value)}`);
  const event =
    typeof record.event === "string" && record.event !== "http.request" ? `[${record.event}] ` : "";
  return `${[time, level, component, `${event}${msg}`].join(" ")}${fields.length > 0 ? `  ${fields.join(" ")}` : ""}\n`;
}

function shown(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** A pino logger writing each line, JSON or made readable, to `write` (stderr by default). */
export function createHolderLogger(options: {
  level: LogLevel;
  format: LogFormat;
  write?: (line: string) => void;
}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  return pino(
    { level: options.level, base: null },
    { write: options.format === "pretty" ? (line: string) => write(prettyLine(line)) : write },
  );
}
