import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import {
  createMcpSigner,
  createMcpVerifier,
  createStandardSigner,
  createStandardVerifier,
  isWebhookError,
} from "@doorbell/webhooks";
import { type Io, UsageError } from "../io.js";
import { parseSavedRequest } from "../saved-request.js";

export const WEBHOOK_USAGE = `doorbell webhook sign   [--secret whsec_…]… [--signing-key whsk_…]… [--scheme standard|mcp]
                        [--id msg_…] [--timestamp SECONDS] [--subscription-id ID]
                        [--body-file FILE | body on stdin] [--json]
doorbell webhook verify [--secret whsec_…]… [--public-key whpk_…]… [--scheme standard|mcp]
                        [--request SAVED.http | --header "name: value"…] [--body-file FILE | body on stdin]
                        [--tolerance SECONDS] [--now SECONDS]

Secrets may also come from DOORBELL_WEBHOOK_SECRET (kept out of shell history).
The body is used byte for byte: nothing is re-serialised.`;

const options = {
  secret: { type: "string", multiple: true },
  "signing-key": { type: "string", multiple: true },
  "public-key": { type: "string", multiple: true },
  scheme: { type: "string", default: "standard" },
  id: { type: "string" },
  timestamp: { type: "string" },
  "subscription-id": { type: "string" },
  "body-file": { type: "string" },
  request: { type: "string" },
  header: { type: "string", multiple: true },
  tolerance: { type: "string" },
  now: { type: "string" },
  json: { type: "boolean", default: false },
} as const;

export async function webhookCommand(args: readonly string[], io: Io): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parse(rest);
  if (values.scheme !== "standard" && values.scheme !== "mcp") {
    throw new UsageError(`--scheme is standard or mcp, not ${JSON.stringify(values.scheme)}`);
  }
  if (action === "sign") return sign(values, io);
  if (action === "verify") return verify(values, io);
  throw new UsageError(action ? `unknown webhook action ${JSON.stringify(action)}` : "say sign or verify");
}

type Values = ReturnType<typeof parse>["values"];

function parse(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: false, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function sign(values: Values, io: Io): Promise<number> {
  const body = await readBody(values["body-file"], io);
  const timestamp =
    values.timestamp === undefined ? Math.floor(io.now() / 1000) : seconds(values.timestamp, "--timestamp");
  const secrets = secretsOf(values, io);
  let headers: Record<string, string>;
  if (values.scheme === "mcp") {
    const [secret, ...extra] = secrets;
    if (!secret || extra.length > 0) throw new UsageError("the mcp scheme signs with exactly one --secret");
    const subscriptionId = values["subscription-id"];
    if (!subscriptionId) throw new UsageError("the mcp scheme needs --subscription-id");
    headers = createMcpSigner(secret).headers({ subscriptionId, timestamp, body });
  } else {
    const id = values.id ?? `msg_${randomBytes(16).toString("base64url").replace(/[-_]/g, "")}`;
    const signer = createStandardSigner({ secrets, signingKeys: values["signing-key"] ?? [] });
    headers = signer.headers({ id, timestamp, body });
  }
  io.stdout(values.json ? `${JSON.stringify(headers, null, 2)}\n` : formatHeaders(headers));
  return 0;
}

async function verify(values: Values, io: Io): Promise<number> {
  const saved = values.request ? parseSavedRequest(await io.readFile(values.request)) : undefined;
  const headers = saved?.headers ?? new Headers();
  for (const line of values.header ?? []) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header takes "name: value", got ${JSON.stringify(line)}`);
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const body =
    saved && values["body-file"] === undefined ? saved.body : await readBody(values["body-file"], io);
  if (saved?.trimmedBytes) {
    io.stderr(`note: ignored ${saved.trimmedBytes} byte(s) after Content-Length in the saved request\n`);
  }
  const clockSeconds = values.now === undefined ? undefined : seconds(values.now, "--now");
  const clock = clockSeconds === undefined ? io.now : () => clockSeconds * 1000;
  const toleranceSeconds =
    values.tolerance === undefined ? undefined : seconds(values.tolerance, "--tolerance");
  const common = { clock, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) };
  try {
    if (values.scheme === "mcp") {
      const verified = createMcpVerifier({ secrets: secretsOf(values, io), ...common }).verify(headers, body);
      io.stdout(
        `ok: X-MCP-Signature verified for subscription ${verified.subscriptionId}, ${age(verified.timestamp, clock)}\n`,
      );
    } else {
      const verifier = createStandardVerifier({
        secrets: secretsOf(values, io, values["public-key"] !== undefined),
        publicKeys: values["public-key"] ?? [],
        ...common,
      });
      const verified = verifier.verify(headers, body);
      io.stdout(
        `ok: ${verified.version} signature verified for webhook-id ${verified.id}, ${age(verified.timestamp, clock)}\n`,
      );
    }
    return 0;
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    io.stdout(`refused: ${error.message} (${error.code})\n`);
    for (const detail of error.details) io.stdout(`  - ${detail}\n`);
    io.stdout(`  body: ${body.length} bytes\n`);
    return 1;
  }
}

function secretsOf(values: Values, io: Io, optional = false): string[] {
  const secrets = values.secret ?? [];
  const fromEnv = io.env.DOORBELL_WEBHOOK_SECRET;
  if (secrets.length === 0 && fromEnv) return [fromEnv];
  if (secrets.length === 0 && !optional && (values["signing-key"] ?? []).length === 0) {
    throw new UsageError("give --secret whsec_… (or set DOORBELL_WEBHOOK_SECRET)");
  }
  return secrets;
}

async function readBody(file: string | undefined, io: Io): Promise<Uint8Array> {
  return file === undefined || file === "-" ? io.stdin() : io.readFile(file);
}

function seconds(value: string, flag: string): number {
  if (!/^\d{1,12}$/.test(value))
    throw new UsageError(`${flag} takes whole seconds, got ${JSON.stringify(value)}`);
  return Number(value);
}

function age(timestamp: number, clock: () => number): string {
  const skew = Math.floor(clock() / 1000) - timestamp;
  return `timestamp ${timestamp} (${skew >= 0 ? `${skew} s ago` : `${-skew} s ahead`})`;
}

function formatHeaders(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\n`)
    .join("");
}
