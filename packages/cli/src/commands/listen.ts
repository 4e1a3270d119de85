/**
 * `doorbell listen`, like `stripe listen` and the Svix CLI: a doorbell endpoint on this
 * machine for debugging. For every request it prints the headers, the verification result and the
 * body; it answers endpoint challenges itself (once their signature verifies), and with
 * `--forward-to` it passes each verified doorbell, byte for byte and with its signature headers,
 * to a local URL and answers the sender with that URL's status (so retries behave as they would
 * against the real receiver).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ChallengeRequest,
  createMcpVerifier,
  createStandardVerifier,
  decodeSecret,
  isWebhookError,
  readChallenge,
} from "@doorbell/webhooks";
import { type Io, UsageError } from "../io.js";
import { forTerminal } from "../terminal-text.js";
import { parseFlags, untilStopped } from "./lifecycle.js";

export const LISTEN_USAGE = `doorbell listen [--listen HOST:PORT] [--secret whsec_…]… [--public-key whpk_…]…
                [--scheme standard|mcp] [--forward-to URL] [--tolerance SECONDS]

A doorbell endpoint for debugging (like stripe listen). Point a subscription's delivery.url at it.
For every request it prints the headers, whether the signature verifies, and the body. It
answers challenges itself once their signature verifies.
  --listen HOST:PORT    where to listen (default 127.0.0.1:8787); any path is accepted
  --secret whsec_…      the subscription's secret (or DOORBELL_WEBHOOK_SECRET, kept out of ps)
  --public-key whpk_…   accept v1a (Ed25519) signatures from this key
  --scheme S            standard (webhook-* headers, push profile; default) or mcp (X-MCP-*)
  --forward-to URL      pass each verified doorbell on to this URL (e.g. your local receiver) and
                        answer with its status; challenges are answered here, not forwarded
  --tolerance SECONDS   allowed clock difference (default 300)
Refused requests are answered 401 (or 400, 413) with the reason, as a real receiver would.`;

const options = {
  listen: { type: "string" },
  secret: { type: "string", multiple: true },
  "public-key": { type: "string", multiple: true },
  scheme: { type: "string" },
  "forward-to": { type: "string" },
  tolerance: { type: "string" },
} as const;

export interface ListenControl {
  /** Resolves when the command should stop (default: SIGINT or SIGTERM). */
  until?: Promise<unknown>;
  /** Called once the endpoint listens, with its base URL. */
  onListening?: (url: string) => void;
}

const MAX_BODY_BYTES = 256 * 1024;
const FORWARD_TIMEOUT_MS = 10_000;
/** Headers never copied when forwarding: they describe this hop, not the doorbell. */
const HOP_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

/** What the flags ask for, checked once before anything listens. */
interface ListenConfig {
  scheme: "standard" | "mcp";
  secrets: string[];
  publicKeys: string[];
  tolerance: number | undefined;
  forwardTo: string | undefined;
  where: { host: string; port: number };
}

/** What every request needs: the checked flags, the verifier and the webhook-ids seen so far. */
interface ListenContext {
  io: Io;
  scheme: ListenConfig["scheme"];
  forwardTo: string | undefined;
  verify: (headers: Headers, body: Uint8Array) => string;
  seen: Map<string, number>;
}

interface ListenAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export async function listenCommand(
  args: readonly string[],
  io: Io,
  control: ListenControl = {},
): Promise<number> {
  const config = readListenConfig(args, io);
  const context: ListenContext = {
    io,
    scheme: config.scheme,
    forwardTo: config.forwardTo,
    verify: createVerify(config, io),
    seen: new Map(),
  };
  let count = 0;

  const server = http.createServer((req, res) => {
    const number = ++count;
    handleRequest(context, req, number)
      .then(({ status, body, headers }) => {
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(body);
      })
      .catch((error: unknown) => {
        io.stderr(
          `${forTerminal(`doorbell listen: request #${number} failed: ${(error as Error).message}`)}\n`,
        );
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end('{"error":"ERR_LISTEN_FAILED"}');
      });
  });

  const { where, scheme, forwardTo } = config;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(where.port, where.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  io.stdout(
    `Listening for doorbells on ${url}/ (any path), ${scheme === "mcp" ? "X-MCP" : "Standard Webhooks"} signatures` +
      `${forwardTo === undefined ? "" : `; verified doorbells go on to ${forwardTo}`}. Ctrl+C stops.\n\n`,
  );
  control.onListening?.(url);
  try {
    await untilStopped(io, control.until);
  } finally {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  return 0;
}

function readListenConfig(args: readonly string[], io: Io): ListenConfig {
  const values = parseFlags(args, options);
  const scheme = values.scheme ?? "standard";
  if (scheme !== "standard" && scheme !== "mcp") {
    throw new UsageError(`--scheme is standard or mcp, not ${JSON.stringify(scheme)}`);
  }
  const secrets = values.secret ?? (io.env.DOORBELL_WEBHOOK_SECRET ? [io.env.DOORBELL_WEBHOOK_SECRET] : []);
  const publicKeys = values["public-key"] ?? [];
  if (secrets.length === 0 && (scheme === "mcp" || publicKeys.length === 0)) {
    throw new UsageError("give --secret whsec_… (or set DOORBELL_WEBHOOK_SECRET): it is what verifies");
  }
  for (const secret of secrets) {
    try {
      decodeSecret(secret);
    } catch {
      throw new UsageError("--secret is whsec_ followed by 24 to 64 bytes in base64");
    }
  }
  const tolerance = values.tolerance === undefined ? undefined : Number(values.tolerance);
  if (tolerance !== undefined && !(Number.isInteger(tolerance) && tolerance >= 0 && tolerance <= 86_400)) {
    throw new UsageError(
      `--tolerance takes whole seconds (0 to 86400), not ${JSON.stringify(values.tolerance)}`,
    );
  }
  const forwardTo = values["forward-to"] === undefined ? undefined : forwardUrl(values["forward-to"]);
  const where = parseListen(values.listen ?? "127.0.0.1:8787");
  return { scheme, secrets, publicKeys, tolerance, forwardTo, where };
}

/** The scheme's verifier, returning the line printed for a doorbell that verifies. */
function createVerify(config: ListenConfig, io: Io): ListenContext["verify"] {
  const { secrets, publicKeys, tolerance } = config;
  const common = { clock: io.now, ...(tolerance === undefined ? {} : { toleranceSeconds: tolerance }) };
  if (config.scheme === "mcp") {
    const verifier = createMcpVerifier({ secrets, ...common });
    return (headers, body) => {
      const ok = verifier.verify(headers, body);
      return `X-MCP-Signature verified for subscription ${ok.subscriptionId}, ${age(ok.timestamp, io.now)}`;
    };
  }
  const verifier = createStandardVerifier({ secrets, publicKeys, ...common });
  return (headers, body) => {
    const ok = verifier.verify(headers, body);
    return `${ok.version} signature verified for webhook-id ${ok.id}, ${age(ok.timestamp, io.now)}`;
  };
}

async function handleRequest(
  context: ListenContext,
  req: http.IncomingMessage,
  number: number,
): Promise<ListenAnswer> {
  const { io, verify, scheme, forwardTo, seen } = context;
  const { body, tooLarge } = await readBody(req);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value])
      headers.append(name, item);
  }
  const lines = [
    `── #${number} ${new Date(io.now()).toISOString()} ${req.method ?? "?"} ${req.url ?? "/"} (${body.length}${tooLarge ? "+" : ""} bytes)`,
    ...headerLines(headers),
  ];
  // Everything printed carries the sender's bytes (path, headers, body): shown, never obeyed.
  const print = (more: string[]) => io.stdout(`${forTerminal([...lines, ...more].join("\n"))}\n\n`);
  if (req.method !== "POST") {
    print(["refused: doorbells come with POST (405)"]);
    return {
      status: 405,
      body: refusal("ERR_WEBHOOK_METHOD", "webhooks are delivered with POST"),
      headers: { allow: "POST" },
    };
  }
  if (tooLarge) {
    print([`refused: the body is larger than ${MAX_BODY_BYTES} bytes (413)`]);
    return { status: 413, body: refusal("ERR_WEBHOOK_BODY_TOO_LARGE", "the body is too large") };
  }
  let verdict: string;
  try {
    verdict = verify(headers, body);
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    print([
      `refused: ${error.message} (${error.code})`,
      ...error.details.map((d) => `  - ${d}`),
      ...schemeHints(scheme, headers),
      "",
      shownBody(body),
    ]);
    return { status: 401, body: refusal(error.code, error.message) };
  }
  const id = headers.get("webhook-id") ?? headers.get("x-mcp-subscription-id") ?? "";
  const before = seen.get(id);
  seen.set(id, io.now());
  const repeat =
    before === undefined
      ? []
      : [
          `note: this webhook-id came before, ${Math.round((io.now() - before) / 1000)} s ago (a retry or a replay)`,
        ];
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    print([`ok: ${verdict}`, "refused: the body is not UTF-8 JSON (400)", "", shownBody(body)]);
    return { status: 400, body: refusal("ERR_WEBHOOK_INVALID_BODY", "the body is not UTF-8 JSON") };
  }
  const challenge: ChallengeRequest | undefined = readChallenge(parsed);
  if (challenge !== undefined) {
    print([`ok: ${verdict}`, ...repeat, `challenge: answered (${challenge.kind})`, "", shownBody(body)]);
    return { status: 200, body: JSON.stringify({ challenge: challenge.challenge }) };
  }
  if (forwardTo === undefined) {
    print([`ok: ${verdict}`, ...repeat, "", shownBody(body)]);
    return { status: 200, body: JSON.stringify({ status: "received" }) };
  }
  const forwarded = await forward(forwardTo, headers, body);
  print([`ok: ${verdict}`, ...repeat, `forwarded to ${forwardTo}: ${forwarded.line}`, "", shownBody(body)]);
  return { status: forwarded.status, body: forwarded.body };
}

async function forward(
  url: string,
  headers: Headers,
  body: Uint8Array,
): Promise<{ status: number; body: string; line: string }> {
  const out = new Headers();
  headers.forEach((value, name) => {
    if (!HOP_HEADERS.has(name)) out.append(name, value);
  });
  const started = performance.now();
  try {
    const answer = await fetch(url, {
      method: "POST",
      headers: out,
      body: Buffer.from(body),
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const text = (await answer.text()).slice(0, 4096);
    const ms = Math.round(performance.now() - started);
    return {
      status: answer.status,
      body: text === "" ? "{}" : text,
      line: `${answer.status} in ${ms} ms${text === "" ? "" : ` — ${oneLine(text)}`}`,
    };
  } catch (error) {
    return {
      status: 502,
      body: refusal("ERR_LISTEN_FORWARD_FAILED", "the forward target did not answer"),
      line: `failed (${whyFetchFailed(error)}); answered 502 so the sender retries`,
    };
  }
}

function forwardUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--forward-to is a URL like http://127.0.0.1:3000/webhooks, not ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError("--forward-to takes an http:// or https:// URL");
  }
  return url.href;
}

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65_535) {
    throw new UsageError(`--listen is HOST:PORT (e.g. 127.0.0.1:8787), not ${JSON.stringify(value)}`);
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

function readBody(req: http.IncomingMessage): Promise<{ body: Buffer; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.once("end", () => resolve({ body: Buffer.concat(chunks), tooLarge }));
    req.once("error", reject);
  });
}

/** The body, pretty-printed when it is JSON, else as text (bytes that are not UTF-8 as base64). */
function shownBody(body: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return `body (${body.length} bytes, not UTF-8, base64): ${Buffer.from(body).toString("base64")}`;
  }
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function headerLines(headers: Headers): string[] {
  const lines: string[] = [];
  headers.forEach((value, name) => {
    lines.push(`${name}: ${value}`);
  });
  return lines;
}

/**
 * What a failed fetch says: its cause's code (ECONNREFUSED, UND_ERR_SOCKET…) and message, not
 * fetch's own "TypeError: fetch failed"; a timeout by name.
 */
function whyFetchFailed(error: unknown): string {
  const { name, message, cause } = error as Error & { cause?: { code?: string; message?: string } };
  if (name === "TimeoutError") return `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`;
  const detail = cause?.message ?? message;
  return cause?.code === undefined ? detail : `${cause.code}: ${detail}`;
}

/** Why a refused request may have been signed right, under another scheme's header names. */
function schemeHints(scheme: string, headers: Headers): string[] {
  const has = (name: string) => headers.has(name);
  if (scheme === "standard" && has("x-mcp-signature"))
    return ["hint: it carries X-MCP-Signature (MCP Events): start doorbell listen with --scheme mcp"];
  if (scheme === "standard" && (has("svix-id") || has("svix-timestamp") || has("svix-signature")))
    return [
      "hint: it carries svix-id / svix-timestamp / svix-signature, Svix's names for these headers;",
      "      Standard Webhooks senders use webhook-id / webhook-timestamp / webhook-signature",
    ];
  if (scheme === "mcp" && has("webhook-signature"))
    return [
      "hint: it carries webhook-signature (Standard Webhooks): start doorbell listen without --scheme mcp",
    ];
  return [];
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").slice(0, 200);

const refusal = (error: string, message: string) => JSON.stringify({ error, message });

function age(timestamp: number, clock: () => number): string {
  const skew = Math.floor(clock() / 1000) - timestamp;
  return `timestamp ${timestamp} (${skew >= 0 ? `${skew} s ago` : `${-skew} s ahead`})`;
}
