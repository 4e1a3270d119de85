/**
 * The quick call: a plain 2026-07-28 `tools/call` of a tool named in `QuickTools`, answered on
 * the Node request itself, beside the SDK, with the bytes the SDK would answer.
 *
 * Why: an empty `intent_list_matches` is the call agents make most (the binding tells them to
 * poll with `since`; push receivers pull after every doorbell). Through the web-standard adapter
 * and a fresh SDK server per request it cost about 2 ms of CPU, twenty times the work it does.
 *
 * Only a request whose every part is the plain shape an SDK client sends is taken: the standard
 * headers agreeing with the body, no session, no token, no Origin, a small body, the `_meta`
 * envelope with nothing the SDK would act on, and arguments the tool's own schema accepts. Every
 * other request (a different shape, a refusal to answer, a malformed body) is handed back
 * untouched, its body with it, and the SDK answers it as before: the quick call never answers
 * anything the SDK would refuse, and changes nothing before it has decided to answer.
 *
 * The answer is what the SDK makes of the same tool result (2026-07-28 encoding: `resultType`
 * stamped, the server's identity under `_meta`; a JSON body). Tests compare the two byte for byte.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Admission } from "./admission.js";
import type { ServingScope } from "./endpoint.js";
import { endQuickCallSpan, inQuickCallSpan, startQuickCallSpan } from "./request-span.js";

/** The revision whose plain calls are taken. */
const MODERN = "2026-07-28";
/** A pull is a few hundred bytes; anything larger is no plain call. */
const MAX_QUICK_BODY_BYTES = 4096;
/** The Accept values SDK clients send; another value is the SDK's to judge. */
const PLAIN_ACCEPT: ReadonlySet<string> = new Set([
  "application/json, text/event-stream",
  "text/event-stream, application/json",
]);
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientInfo",
  "io.modelcontextprotocol/clientCapabilities",
]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A tool answered beside the SDK: given a call's arguments, the call as the registered tool makes
 * it (limit, run, refusals, observation, the SDK's output check), or undefined when the tool's
 * input schema refuses them (the SDK then answers, in its own words). `header` reads the HTTP
 * request's headers.
 */
export type QuickTool = (args: unknown) => QuickCall | undefined;
export type QuickCall = (
  scope: ServingScope,
  header: (name: string) => string | undefined,
) => Promise<CallToolResult>;

export type QuickTools = ReadonlyMap<string, QuickTool>;

/** What the endpoint lends the quick call. */
export interface QuickContext {
  tools: QuickTools;
  admission: Admission;
  /** The Host/Origin check of every MCP request; a refusal is the SDK path's to answer. */
  hostRefusal(host: string, origin: string | undefined): string | undefined;
  /** The sign-in gate (OAuth); an answer from it is the SDK path's to give. */
  gated(message: unknown): boolean;
  closed(): boolean;
  scope(clientKey: string): ServingScope;
  /** The server identity the SDK stamps under `_meta`. */
  serverInfo: { name: string; version: string };
}

/** How the caller learns what became of a request. */
export type QuickOutcome =
  /** Answered (or being answered): nothing more to do. */
  | { answered: true }
  /** Not a quick call: serve it as usual, with the body already read (undefined: nothing was read). */
  | { answered: false; body: Buffer | undefined };

const NOT_QUICK: QuickOutcome = { answered: false, body: undefined };

/**
 * Serves `req` if it is a plain quick call. `onAnswer` runs once the call is taken, before any
 * work (the access log hooks the response there).
 */
export async function serveQuick(
  context: QuickContext,
  req: IncomingMessage,
  res: ServerResponse,
  clientKey: string | undefined,
  onAnswer: () => void,
): Promise<QuickOutcome> {
  const tool = plainHeaders(context, req);
  if (tool === undefined) return NOT_QUICK;
  const body = await readSmallBody(req);
  const call = plainCall(body, req.headers["mcp-name"]);
  const run = call === undefined ? undefined : tool(call.arguments);
  if (call === undefined || run === undefined || context.gated(call.message) || context.closed()) {
    return { answered: false, body };
  }
  // A full house is the usual path's to refuse (503 and Retry-After), counted once, there.
  if (context.admission.wouldRefuse(1)) return { answered: false, body };
  const release = await context.admission.enter(1);
  if (release === undefined) return { answered: false, body };
  onAnswer();
  // The same span as the SDK path's when an OpenTelemetry SDK is registered (request-span.ts).
  const span = startQuickCallSpan(req.url ?? "/");
  let result: CallToolResult;
  try {
    const scope = context.scope(clientKey ?? "anonymous");
    const header = (name: string) => headerValue(req.headers[name.toLowerCase()]);
    result = await (span === undefined
      ? run(scope, header)
      : inQuickCallSpan(span, () => run(scope, header)));
  } catch (error) {
    // The guarded call turns every failure into a result; a throw past it is what the SDK's
    // tools/call turns into a tool error with the error's message.
    result = {
      content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }],
      isError: true,
    };
  }
  let text: string;
  try {
    text = JSON.stringify({ result: encodeResult(result, context.serverInfo), jsonrpc: "2.0", id: call.id });
  } finally {
    // A JSON answer is complete once made (answered.ts): the place goes back before it is written.
    release();
  }
  answer(res, 200, text);
  if (span !== undefined) endQuickCallSpan(span, 200);
  return { answered: true };
}

/** The tool a request's headers name, if every header is a plain call's. */
function plainHeaders(context: QuickContext, req: IncomingMessage): QuickTool | undefined {
  const h = req.headers;
  if (req.method !== "POST" || h["mcp-method"] !== "tools/call" || h["mcp-protocol-version"] !== MODERN) {
    return undefined;
  }
  const tool = typeof h["mcp-name"] === "string" ? context.tools.get(h["mcp-name"]) : undefined;
  if (tool === undefined) return undefined;
  if (h["content-type"] !== "application/json" || !PLAIN_ACCEPT.has(h.accept ?? "")) return undefined;
  if (
    h.authorization !== undefined ||
    h["mcp-session-id"] !== undefined ||
    h["last-event-id"] !== undefined
  ) {
    return undefined;
  }
  if (h["transfer-encoding"] !== undefined || h.expect !== undefined || h.host === undefined)
    return undefined;
  const length = Number(h["content-length"]);
  if (!(Number.isSafeInteger(length) && length > 0 && length <= MAX_QUICK_BODY_BYTES)) return undefined;
  // Mcp-Param-* headers are checked against a tool's declarations: the SDK's to do.
  for (const name of Object.keys(h)) if (name.startsWith("mcp-param-")) return undefined;
  if (context.hostRefusal(h.host, h.origin) !== undefined) return undefined;
  return tool;
}

/** The whole body (its length was declared and is small), or as much as came before the client left. */
function readSmallBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(Buffer.concat(chunks)));
    // A client that leaves mid-body: what came is handed on, and the usual path answers it as
    // it answers any body cut short (and logs the client as gone).
    const cut = () => resolve(Buffer.concat(chunks));
    req.once("error", cut);
    req.once("aborted", cut);
  });
}

interface PlainCall {
  message: unknown;
  id: string | number;
  arguments: unknown;
}

/**
 * The call in a body, if it is exactly a plain one: a single JSON-RPC request with a string or
 * whole-number id, `tools/call` of the tool the header named, and the envelope of the revision
 * with a client identity of name and version and no client capabilities (anything more is the
 * SDK's to read).
 */
function plainCall(body: Buffer, headerName: unknown): PlainCall | undefined {
  let message: unknown;
  try {
    message = JSON.parse(utf8.decode(body));
  } catch {
    return undefined;
  }
  if (!isPlainObject(message) || !hasOnlyKeys(message, ["jsonrpc", "id", "method", "params"]))
    return undefined;
  const { jsonrpc, id, method, params } = message;
  if (jsonrpc !== "2.0" || method !== "tools/call" || !isPlainObject(params)) return undefined;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return undefined;
  if (!hasOnlyKeys(params, ["name", "arguments", "_meta"]) || params.name !== headerName) return undefined;
  if (!isPlainObject(params.arguments) || !plainEnvelope(params._meta)) return undefined;
  return { message, id, arguments: params.arguments };
}

function plainEnvelope(meta: unknown): boolean {
  if (!isPlainObject(meta)) return false;
  for (const key of Object.keys(meta)) if (!ENVELOPE_KEYS.has(key)) return false;
  if (meta["io.modelcontextprotocol/protocolVersion"] !== MODERN) return false;
  const capabilities = meta["io.modelcontextprotocol/clientCapabilities"];
  if (!isPlainObject(capabilities) || Object.keys(capabilities).length > 0) return false;
  const info = meta["io.modelcontextprotocol/clientInfo"];
  if (info === undefined) return true;
  return (
    isPlainObject(info) &&
    hasOnlyKeys(info, ["name", "version"]) &&
    typeof info.name === "string" &&
    typeof info.version === "string"
  );
}

/** The members of a tool result in the order of the SDK's CallToolResult schema; any others follow. */
const RESULT_ORDER = ["_meta", "content", "structuredContent", "isError"] as const;

/**
 * The SDK's 2026-07-28 encoding of a tools/call result: read through its CallToolResult schema
 * (which puts the members it knows first, in its order), `resultType` "complete" added when the
 * tool gave none, then the server's identity under `_meta` unless the tool put one there.
 */
function encodeResult(result: CallToolResult, serverInfo: { name: string; version: string }): unknown {
  const read: Record<string, unknown> = {};
  for (const key of RESULT_ORDER) if (result[key] !== undefined) read[key] = result[key];
  for (const [key, value] of Object.entries(result))
    if (!(key in read) && value !== undefined) read[key] = value;
  const typed = read.resultType === undefined ? { ...read, resultType: "complete" } : read;
  const meta = typed._meta;
  if (meta === undefined) return { ...typed, _meta: { "io.modelcontextprotocol/serverInfo": serverInfo } };
  if (!isPlainObject(meta) || meta["io.modelcontextprotocol/serverInfo"] !== undefined) return typed;
  return { ...typed, _meta: { ...meta, "io.modelcontextprotocol/serverInfo": serverInfo } };
}

function answer(res: ServerResponse, status: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  res.writeHead(status, { "content-type": "application/json", "content-length": bytes.length });
  res.end(bytes);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) return false;
  return true;
}
