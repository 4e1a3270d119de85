import path from "node:path";
import {
  type AdmissionLimits,
  type ClientAddressHeader,
  chooseHeapBound,
  chooseLogFormat,
  createHolderLogger,
  DEFAULT_ADMISSION,
  DEFAULT_CLIENT_ADDRESS_HEADER,
  type LimitBucket,
  type LimitRule,
  type LogFormat,
  type LogLevel,
  parseClientAddressHeader,
  parseLimitSpecs,
  parseTrustedProxies,
} from "@doorbell/holder";
import { decodeSecret, readPrivateFile } from "@doorbell/webhooks";
import { bufferedLines } from "../buffered-lines.js";
import { type Io, processIo, UsageError } from "../io.js";

/**
 * The settings `doorbell serve` and `doorbell catalogue import` share, from flags first, then
 * environment variables (which keep passwords in database and SMTP URLs out of shell history and
 * `ps`), then defaults. Checked once here; nothing later re-reads the environment.
 */
export interface HolderSettings {
  dataDir: string;
  /** A postgres:// URL or a SQLite file; undefined: `<dataDir>/holder.sqlite`. */
  database: string | undefined;
  publicUrl: string;
  smtp: string | undefined;
  mailFrom: string | undefined;
  /** At most one match digest per intent in this long; undefined: the holder's default. */
  digestWindowMs: number | undefined;
}

export const ENV = {
  dataDir: "DOORBELL_DATA_DIR",
  database: "DOORBELL_DATABASE_URL",
  publicUrl: "DOORBELL_PUBLIC_URL",
  smtp: "DOORBELL_SMTP_URL",
  mailFrom: "DOORBELL_MAIL_FROM",
  logLevel: "DOORBELL_LOG_LEVEL",
  trustProxy: "DOORBELL_TRUST_PROXY",
  clientAddressHeader: "DOORBELL_CLIENT_ADDRESS_HEADER",
  limits: "DOORBELL_LIMITS",
  checkOrigins: "DOORBELL_CHECK_ORIGINS",
  digestWindow: "DOORBELL_DIGEST_WINDOW_MINUTES",
  mcpConcurrency: "DOORBELL_MCP_CONCURRENCY",
  mcpQueue: "DOORBELL_MCP_QUEUE",
  heapBound: "DOORBELL_HEAP_BOUND_MB",
  operatorPage: "DOORBELL_OPERATOR_PAGE",
  deliveryPerHost: "DOORBELL_DELIVERY_PER_HOST",
  retentionDays: "DOORBELL_RETENTION_DAYS",
  deadLetterDays: "DOORBELL_DEAD_LETTER_DAYS",
  endpointDisableAfter: "DOORBELL_ENDPOINT_DISABLE_AFTER",
  operatorWebhook: "DOORBELL_OPERATOR_WEBHOOK",
  operatorWebhookSecret: "DOORBELL_OPERATOR_WEBHOOK_SECRET",
  operatorWebhookSecretFile: "DOORBELL_OPERATOR_WEBHOOK_SECRET_FILE",
} as const;

export const sharedOptions = {
  "data-dir": { type: "string" },
  database: { type: "string" },
  "public-url": { type: "string" },
  smtp: { type: "string" },
  "mail-from": { type: "string" },
  "digest-window": { type: "string" },
} as const;

export const SHARED_USAGE = `  --data-dir DIR        where the SQLite file and the generated seal keys live (default .doorbell; ${ENV.dataDir})
  --database URL        postgres://user:pass@host/db instead of SQLite (${ENV.database})
  --public-url URL      the public origin of the pages and /mcp (${ENV.publicUrl})
  --smtp URL            smtp://user:pass@host:587 or smtps://…; without it mail goes to the local mailbox page (${ENV.smtp})
  --mail-from ADDRESS   sender of the holder's mail with SMTP (${ENV.mailFrom})
  --digest-window MIN   at most one match digest per intent in MIN minutes (default 15; 0 mails
                        every import's matches at once; ${ENV.digestWindow})`;

type SharedValues = { [K in keyof typeof sharedOptions]?: string };

const empty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim();

export function holderSettings(values: SharedValues, io: Io, defaultPublicUrl: string): HolderSettings {
  const dataDir = path.resolve(empty(values["data-dir"]) ?? empty(io.env[ENV.dataDir]) ?? ".doorbell");
  const database = empty(values.database) ?? empty(io.env[ENV.database]);
  if (
    database !== undefined &&
    /^[a-z][a-z0-9+.-]*:\/\//i.test(database) &&
    !/^postgres(ql)?:\/\//i.test(database)
  ) {
    throw new UsageError("--database takes a postgres:// URL or a SQLite file path");
  }
  const publicUrl = checkPublicUrl(
    empty(values["public-url"]) ?? empty(io.env[ENV.publicUrl]) ?? defaultPublicUrl,
  );
  const smtp = empty(values.smtp) ?? empty(io.env[ENV.smtp]);
  if (smtp !== undefined && !/^smtps?:\/\//i.test(smtp)) {
    throw new UsageError("--smtp takes an smtp:// or smtps:// URL");
  }
  const mailFrom = empty(values["mail-from"]) ?? empty(io.env[ENV.mailFrom]);
  const digestWindowMs = digestWindowSetting(values["digest-window"], io);
  return { dataDir, database, publicUrl, smtp, mailFrom, digestWindowMs };
}

function checkPublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--public-url must be an absolute URL like https://intents.example.sk, not ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError("--public-url must start with http:// or https://");
  }
  if (
    (url.pathname !== "/" && url.pathname !== "") ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== ""
  ) {
    throw new UsageError(
      "--public-url is an origin only (scheme, host, port): the holder serves /mcp and its pages at the root",
    );
  }
  return url.origin;
}

/**
 * Log lines go to stderr; summaries and URLs go to stdout. JSON (one object per line)
 * in production and whenever stderr is not a terminal, a readable line at a terminal;
 * DOORBELL_LOG_FORMAT=json|pretty decides.
 */
export function holderLogger(io: Io, fallback: "info" | "warn") {
  const level = empty(io.env[ENV.logLevel]) ?? fallback;
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(level)) {
    throw new UsageError(`${ENV.logLevel} is one of fatal, error, warn, info, debug, trace, silent`);
  }
  let format: LogFormat;
  try {
    format = chooseLogFormat(io.env, io === processIo && process.stderr.isTTY === true);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // A real process gathers its lines (buffered-lines.ts); an injected io sees each line at once.
  const write =
    io === processIo ? bufferedLines((text) => io.stderr(text)) : (line: string) => io.stderr(line);
  return createHolderLogger({ level: level as LogLevel, format, write });
}

/** Where the data is, for summaries: a PostgreSQL password never appears. */
export function keysLine(source: string, file: string | undefined): string {
  if (source === "env") return "from DOORBELL_SEAL_KEYS";
  if (source === "key-file") return `key file ${file}`;
  return `generated key file ${file} (back it up with the database: sealed data needs it)`;
}

/** Comma-separated or repeated values of a flag, else of its environment variable. */
const listSetting = (given: string[] | undefined, io: Io, name: string): string[] =>
  (given?.length ? given : empty(io.env[name]) === undefined ? [] : [io.env[name] as string])
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");

/**
 * `--check-origin` (repeated or comma-separated; else DOORBELL_CHECK_ORIGINS), the
 * origins whose key pages /check fetches: each an http(s) origin, without a path.
 */
export function checkOriginSettings(values: { "check-origin"?: string[] | undefined }, io: Io): string[] {
  return listSetting(values["check-origin"], io, ENV.checkOrigins).map((value) => {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {}
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
      throw new UsageError(`--check-origin: ${JSON.stringify(value)} is not an http(s) origin`);
    }
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "") {
      throw new UsageError(
        `--check-origin: ${JSON.stringify(value)} has more than an origin; give only ${url.origin}`,
      );
    }
    return url.origin;
  });
}

/**
 * `--trust-proxy` (CIDRs, comma-separated or repeated; else DOORBELL_TRUST_PROXY), the one header
 * those proxies write (`--client-address-header`, else DOORBELL_CLIENT_ADDRESS_HEADER, default
 * x-forwarded-for) and `--limit bucket=points/seconds` (repeated; else DOORBELL_LIMITS,
 * comma-separated).
 */
export function limitSettings(
  values: {
    "trust-proxy"?: string[] | undefined;
    "client-address-header"?: string | undefined;
    limit?: string[] | undefined;
  },
  io: Io,
): {
  trustProxy: string[];
  clientAddressHeader: ClientAddressHeader;
  limits: Partial<Record<LimitBucket, LimitRule>>;
} {
  const fromEnv = (name: string) => (empty(io.env[name]) === undefined ? [] : [io.env[name] as string]);
  const trustProxy = listSetting(values["trust-proxy"], io, ENV.trustProxy);
  try {
    parseTrustedProxies(trustProxy);
  } catch (error) {
    throw new UsageError(`--trust-proxy: ${(error as Error).message}`);
  }
  const headerText = empty(values["client-address-header"]) ?? empty(io.env[ENV.clientAddressHeader]);
  let clientAddressHeader: ClientAddressHeader = DEFAULT_CLIENT_ADDRESS_HEADER;
  try {
    if (headerText !== undefined) clientAddressHeader = parseClientAddressHeader(headerText);
  } catch (error) {
    throw new UsageError(`--client-address-header: ${(error as Error).message} (${ENV.clientAddressHeader})`);
  }
  let limits: Partial<Record<LimitBucket, LimitRule>>;
  try {
    limits = parseLimitSpecs(values.limit?.length ? values.limit : fromEnv(ENV.limits));
  } catch (error) {
    throw new UsageError(`--limit: ${(error as Error).message}`);
  }
  return { trustProxy, clientAddressHeader, limits };
}

/** The longest digest window a holder takes: a day (a person who waits longer stops reading). */
const MAX_DIGEST_WINDOW_MINUTES = 24 * 60;

/**
 * A whole-number setting from its flag, else its variable; undefined when neither is given.
 * Anything else than digits within [min, max] is refused with the flag, the range and the value.
 */
function wholeNumberSetting(
  flag: string,
  variable: string,
  given: string | undefined,
  io: Io,
  range: { min: number; max: number; unit: string },
): number | undefined {
  const text = empty(given) ?? empty(io.env[variable]);
  if (text === undefined) return undefined;
  const n = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= range.min && n <= range.max)) {
    throw new UsageError(
      `${flag} takes ${range.unit} from ${range.min} to ${range.max} (${variable}), not ${JSON.stringify(text)}`,
    );
  }
  return n;
}

/**
 * `--digest-window MINUTES` (or its variable): at most one match digest per intent in that long;
 * 0 mails every import's matches at once. Undefined keeps the holder's default (15 minutes).
 */
function digestWindowSetting(value: string | undefined, io: Io): number | undefined {
  const minutes = wholeNumberSetting("--digest-window", ENV.digestWindow, value, io, {
    min: 0,
    max: MAX_DIGEST_WINDOW_MINUTES,
    unit: "whole minutes",
  });
  return minutes === undefined ? undefined : minutes * 60_000;
}

/** The most MCP requests one process may serve at once, or let wait. */
const MAX_ADMISSION = 100_000;

/** The largest heap bound taken, in MB: far past any heap V8 allows. */
const MAX_HEAP_BOUND_MB = 1_048_576;
const MB = 1024 * 1024;

/**
 * `--mcp-concurrency N` (MCP requests served at once per process), `--mcp-queue N` (requests
 * that may wait for a turn before the rest get 503) and `--heap-bound MB` (the heap size past
 * which no new request is admitted; 0 for none; else chosen from the machine), else their
 * variables.
 */
export function admissionSettings(
  values: {
    "mcp-concurrency"?: string | undefined;
    "mcp-queue"?: string | undefined;
    "heap-bound"?: string | undefined;
  },
  io: Io,
): Required<AdmissionLimits> {
  const concurrent = wholeNumberSetting(
    "--mcp-concurrency",
    ENV.mcpConcurrency,
    values["mcp-concurrency"],
    io,
    {
      min: 1,
      max: MAX_ADMISSION,
      unit: "a whole number",
    },
  );
  const waiting = wholeNumberSetting("--mcp-queue", ENV.mcpQueue, values["mcp-queue"], io, {
    min: 0,
    max: MAX_ADMISSION,
    unit: "a whole number",
  });
  const heapMb = wholeNumberSetting("--heap-bound", ENV.heapBound, values["heap-bound"], io, {
    min: 0,
    max: MAX_HEAP_BOUND_MB,
    unit: "whole megabytes (0 for none)",
  });
  return {
    concurrent: concurrent ?? DEFAULT_ADMISSION.concurrent,
    waiting: waiting ?? DEFAULT_ADMISSION.waiting,
    heapBound:
      heapMb === undefined ? chooseHeapBound() : heapMb === 0 ? Number.POSITIVE_INFINITY : heapMb * MB,
  };
}

/** Doorbells in flight to one destination host per process, by default: half of the worker's 16. */
export const DEFAULT_DELIVERY_PER_HOST = 8;
/** Failed attempts and replayed dead letters are kept this many days, by default. */
export const DEFAULT_RETENTION_DAYS = 30;
/** Dead letters never replayed are kept this many days, by default. */
export const DEFAULT_DEAD_LETTER_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/** `--retention-days N` and `--dead-letter-days N` (else their variables): how long the delivery log keeps its rows. */
export function retentionSettings(
  values: { "retention-days"?: string | undefined; "dead-letter-days"?: string | undefined },
  io: Io,
): { retentionDays: number; deadLetterDays: number; maxAgeMs: number; deadLetterMaxAgeMs: number } {
  const days = { min: 1, max: 3650, unit: "whole days" };
  const retentionDays =
    wholeNumberSetting("--retention-days", ENV.retentionDays, values["retention-days"], io, days) ??
    DEFAULT_RETENTION_DAYS;
  const deadLetterDays =
    wholeNumberSetting("--dead-letter-days", ENV.deadLetterDays, values["dead-letter-days"], io, days) ??
    DEFAULT_DEAD_LETTER_DAYS;
  return {
    retentionDays,
    deadLetterDays,
    maxAgeMs: retentionDays * DAY_MS,
    deadLetterMaxAgeMs: deadLetterDays * DAY_MS,
  };
}

/** `--delivery-per-host N` (else its variable): doorbell subscriptions of one host handled at once per process. */
export function deliveryPerHostSetting(values: { "delivery-per-host"?: string | undefined }, io: Io): number {
  return (
    wholeNumberSetting("--delivery-per-host", ENV.deliveryPerHost, values["delivery-per-host"], io, {
      min: 1,
      max: 1024,
      unit: "a whole number",
    }) ?? DEFAULT_DELIVERY_PER_HOST
  );
}

/** An endpoint failing every attempt this long is disabled, by default. */
export const DEFAULT_ENDPOINT_DISABLE_AFTER = "5d";
const DURATION_UNITS_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
/** The longest --endpoint-disable-after: a year (an MCP Events lease is renewed, so it may be long). */
const MAX_DISABLE_AFTER_MS = 365 * DURATION_UNITS_MS.d;

/**
 * `--endpoint-disable-after DURATION` (else its variable): a whole number and a unit, m, h, d or w
 * (90m, 12h, 5d, 2w), from one minute to a year.
 */
export function endpointDisableAfterSetting(
  values: { "endpoint-disable-after"?: string | undefined },
  io: Io,
): { ms: number; text: string } {
  const text =
    empty(values["endpoint-disable-after"]) ??
    empty(io.env[ENV.endpointDisableAfter]) ??
    DEFAULT_ENDPOINT_DISABLE_AFTER;
  const match = /^(\d{1,6})\s*([mhdw])$/i.exec(text);
  const ms = match
    ? Number(match[1]) *
      DURATION_UNITS_MS[(match[2] as string).toLowerCase() as keyof typeof DURATION_UNITS_MS]
    : Number.NaN;
  if (!(ms >= DURATION_UNITS_MS.m && ms <= MAX_DISABLE_AFTER_MS)) {
    throw new UsageError(
      `--endpoint-disable-after takes a whole number and a unit m, h, d or w (90m, 12h, 5d, 2w), from 1m to 365d (${ENV.endpointDisableAfter}), not ${JSON.stringify(text)}`,
    );
  }
  return { ms, text };
}

/**
 * `--operator-webhook URL` (else its variable), where endpoint.disabled, endpoint.recovered and
 * delivery.exhausted are POSTed, and its signing secret: `--operator-webhook-secret-file FILE`, else
 * the secret itself in DOORBELL_OPERATOR_WEBHOOK_SECRET (kept out of ps), else the one the database
 * keeps from an earlier start, else a new one the holder writes to a file in its data directory.
 */
export async function operatorWebhookSetting(
  values: { "operator-webhook"?: string | undefined; "operator-webhook-secret-file"?: string | undefined },
  io: Io,
): Promise<{ url: string; secret?: string; secretFrom: string } | undefined> {
  const text = empty(values["operator-webhook"]) ?? empty(io.env[ENV.operatorWebhook]);
  const file = empty(values["operator-webhook-secret-file"]) ?? empty(io.env[ENV.operatorWebhookSecretFile]);
  const inline = empty(io.env[ENV.operatorWebhookSecret]);
  if (text === undefined) {
    if (file !== undefined || inline !== undefined) {
      throw new UsageError(
        `an operator webhook secret is given but no --operator-webhook URL (${ENV.operatorWebhook}) to send with it`,
      );
    }
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {}
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "") {
    throw new UsageError(
      `--operator-webhook takes an http(s) URL without credentials (${ENV.operatorWebhook})`,
    );
  }
  if (file !== undefined) {
    const read = await readPrivateFile(path.resolve(file), { mode: 0o600 });
    if (read === undefined) throw new UsageError(`--operator-webhook-secret-file: no file at ${file}`);
    return {
      url: url.href,
      secret: checkedSecret(read.trim(), "--operator-webhook-secret-file"),
      secretFrom: `file ${file}`,
    };
  }
  if (inline !== undefined) {
    return {
      url: url.href,
      secret: checkedSecret(inline, ENV.operatorWebhookSecret),
      secretFrom: ENV.operatorWebhookSecret,
    };
  }
  return { url: url.href, secretFrom: "kept by the holder" };
}

function checkedSecret(secret: string, from: string): string {
  try {
    decodeSecret(secret);
  } catch {
    throw new UsageError(`${from}: the secret must be whsec_ followed by base64`);
  }
  return secret;
}
