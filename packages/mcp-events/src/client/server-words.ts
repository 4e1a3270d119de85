/**
 * The server's own words about a refusal, as they may appear in an EventsClientError's message:
 * its JSON-RPC `message` (unless that is only the error's name) and `data.reason`. They are
 * untrusted text, so each is quoted, cut short and has its control, C1 and bidirectional
 * characters escaped: a log line or a model reading the message sees them as data, never as
 * layout. The verbatim text stays in the error's `serverMessage` and `serverData`.
 */
import { DIALECTS } from "../protocol/detect.js";
import { EVENTS_ERROR_CODES, type EventsErrorName } from "../protocol/errors.js";

const MAX_CHARS = 200;

/** The messages the dialects write when a server gave none of its own ("Forbidden", "CursorExpired"…). */
const DEFAULT_MESSAGES: ReadonlySet<string> = new Set(
  Object.values(DIALECTS).flatMap((dialect) =>
    (Object.keys(EVENTS_ERROR_CODES) as EventsErrorName[]).flatMap((kind) => [
      kind,
      dialect.error(kind).message,
    ]),
  ),
);

/**
 * What follows "the server answered X" in a message: `: "message" (reason: "…")`, either part
 * alone, or "" when the server said nothing beyond the error's name.
 */
export function serverWords(message: string | undefined, data: unknown): string {
  const said =
    message !== undefined && message.trim() !== "" && !DEFAULT_MESSAGES.has(message.trim())
      ? `: ${quoted(message)}`
      : "";
  const raw = (data as { reason?: unknown } | null | undefined)?.reason;
  const reason =
    typeof raw === "string" && raw.trim() !== "" && raw !== message ? ` (reason: ${quoted(raw)})` : "";
  return `${said}${reason}`;
}

function quoted(text: string): string {
  const short = text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text;
  // JSON.stringify escapes C0 controls, quotes and backslashes; the rest is escaped by hand.
  return JSON.stringify(short).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
