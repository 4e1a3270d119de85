import { type ClientAddressHeader, createHolder, type Holder, limitUsageLines } from "@doorbell/holder";
import { type Io, UsageError } from "../io.js";
import {
  admissionSettings,
  checkOriginSettings,
  DEFAULT_DEAD_LETTER_DAYS,
  DEFAULT_DELIVERY_PER_HOST,
  DEFAULT_ENDPOINT_DISABLE_AFTER,
  DEFAULT_RETENTION_DAYS,
  deliveryPerHostSetting,
  ENV,
  endpointDisableAfterSetting,
  holderLogger,
  holderSettings,
  keysLine,
  limitSettings,
  operatorWebhookSetting,
  retentionSettings,
  SHARED_USAGE,
  sharedOptions,
} from "./holder-config.js";
import {
  listenFlags,
  listenOrClose,
  parseFlags,
  printSummary,
  untilStopped,
  webhookPolicyFlag,
} from "./lifecycle.js";
import { operatorPageSetting } from "./operator-page-config.js";

/** Every shared limit with its default and the exact `--limit` that changes it. */
const LIMIT_USAGE = limitUsageLines()
  .map((line) => `${" ".repeat(26)}${line}`)
  .join("\n");

export const SERVE_USAGE = `doorbell serve [--port 8080] [--host 127.0.0.1] [--no-demo] [--webhook-policy production]
               [--data-dir .doorbell] [--database postgres://…] [--public-url URL] [--smtp smtp://…]

Runs the intent holder: the MCP endpoint at /mcp, the consent pages and, with no SMTP server,
a local mailbox page. With no flags: a SQLite file under .doorbell, the demo catalogue
(imported once) and the local mailbox.
  --port N              default 8080 (0 needs --public-url)
  --host ADDRESS        default 127.0.0.1; 0.0.0.0 listens on every interface
  --no-demo             do not import the demo catalogue
  --webhook-policy P    where doorbells (push profile) may go: production (https:443, public
                        addresses only) or development (also http and loopback, for a demo on one
                        machine). Default: development with the local mailbox, production with SMTP
  --trust-proxy CIDRS   proxies whose forwarding header gives the client address that limits count
                        (comma-separated or repeated, e.g. 10.0.0.0/8; ${ENV.trustProxy})
  --client-address-header H
                        the one header those proxies write: x-forwarded-for (default; nginx's
                        $proxy_add_x_forwarded_for, HAProxy's option forwardfor) or forwarded
                        (RFC 7239). The other header is never read: a proxy passes it through as the
                        client sent it (${ENV.clientAddressHeader})
  --check-origin URL    an origin whose key pages the record checker at /check fetches, e.g.
                        https://api.stackshift.cloud (repeatable or comma-separated; ${ENV.checkOrigins}).
                        Default none: a visitor gives the signers' key pages with the record
  --limit B=N/SECONDS   change a shared limit to N points per SECONDS, counted across processes
                        (repeatable; ${ENV.limits}, comma-separated). A call over a limit is refused
                        with 429 (a tool call: a tool error) that names the limit and this flag.
                        Mails asked for are sign-in links and consent confirmations. Each limit with
                        its default, written as the --limit that sets it:
${LIMIT_USAGE}
  --mcp-concurrency N   MCP requests one process serves at once (default 32; ${ENV.mcpConcurrency})
  --mcp-queue N         MCP requests that may wait for a turn; past them a request gets 503 with
                        Retry-After: 1 (default 1024; ${ENV.mcpQueue})
  --heap-bound MB       past this JavaScript heap size a process admits no new MCP request (503,
                        Retry-After: 1) until it is back under 90 % of it; 0 for none. Default: 85 %
                        of V8's heap limit, at most half the process's memory (${ENV.heapBound})
  --delivery-per-host N doorbell subscriptions of one destination host one process delivers to at
                        once, of its 16: a host that hangs holds no more (default ${DEFAULT_DELIVERY_PER_HOST}; ${ENV.deliveryPerHost})
  --retention-days N    days the delivery log keeps failed attempts and replayed dead letters
                        (default ${DEFAULT_RETENTION_DAYS}; ${ENV.retentionDays})
  --dead-letter-days N  days a dead letter never replayed is kept for a replay (default ${DEFAULT_DEAD_LETTER_DAYS};
                        ${ENV.deadLetterDays})
  --endpoint-disable-after D
                        an endpoint failing every attempt this long is disabled: a push
                        subscription ends (rule 5), an MCP Events one is suspended; 90m, 12h, 5d, 2w
                        (default ${DEFAULT_ENDPOINT_DISABLE_AFTER}; ${ENV.endpointDisableAfter})
  --operator-webhook URL
                        POST endpoint.disabled, endpoint.recovered and delivery.exhausted here,
                        signed with Standard Webhooks, through the egress policy (${ENV.operatorWebhook})
  --operator-webhook-secret-file FILE
                        its whsec_ signing secret (${ENV.operatorWebhookSecretFile}; or the secret in
                        ${ENV.operatorWebhookSecret}); default: kept in the database, generated once
                        into <data-dir>/operator-webhook-secret
  --metrics             serve GET /metrics (Prometheus text). A holder reachable beyond this
                        machine needs DOORBELL_METRICS_TOKEN (scrapers send it as a bearer token);
                        setting the token turns metrics on
  --operator-page       serve the operator page at /operator: endpoint health, delivery over the
                        last hours and days, failed attempts, dead letters and their replay. Off by
                        default (${ENV.operatorPage}=on). Guarded like /metrics: beyond this machine
                        it needs DOORBELL_METRICS_TOKEN (the browser asks for it as a password)
${SHARED_USAGE}
Log lines go to stderr at DOORBELL_LOG_LEVEL (default info), one access line per request:
readable at a terminal, JSON otherwise or with NODE_ENV=production (DOORBELL_LOG_FORMAT=json|pretty).`;

const options = {
  ...sharedOptions,
  port: { type: "string" },
  host: { type: "string" },
  demo: { type: "boolean" },
  "no-demo": { type: "boolean" },
  "webhook-policy": { type: "string" },
  "trust-proxy": { type: "string", multiple: true },
  "client-address-header": { type: "string" },
  "check-origin": { type: "string", multiple: true },
  limit: { type: "string", multiple: true },
  "mcp-concurrency": { type: "string" },
  "mcp-queue": { type: "string" },
  "heap-bound": { type: "string" },
  "delivery-per-host": { type: "string" },
  "retention-days": { type: "string" },
  "dead-letter-days": { type: "string" },
  "endpoint-disable-after": { type: "string" },
  "operator-webhook": { type: "string" },
  "operator-webhook-secret-file": { type: "string" },
  metrics: { type: "boolean" },
  "operator-page": { type: "boolean" },
} as const;

export interface ServeControl {
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  until?: Promise<unknown>;
  /** Called once the holder listens. */
  onListening?: (holder: Holder, address: { port: number; host: string }) => void;
}

export async function serveCommand(
  args: readonly string[],
  io: Io,
  control: ServeControl = {},
): Promise<number> {
  const values = parseFlags(args, options);
  if (values.demo && values["no-demo"]) throw new UsageError("give --demo or --no-demo, not both");
  const listen = listenFlags(values, io, 8080);
  const webhookPolicy = webhookPolicyFlag(values["webhook-policy"]);
  const settings = holderSettings(values, io, listen.guessedUrl);
  const log = holderLogger(io, "info");
  // GET /metrics with --metrics or a token (DOORBELL_METRICS_TOKEN, kept out of ps).
  const metricsToken = io.env.DOORBELL_METRICS_TOKEN?.trim() || undefined;
  const metrics =
    values.metrics === true || metricsToken !== undefined
      ? metricsToken === undefined
        ? {}
        : { token: metricsToken }
      : undefined;
  // The operator page with --operator-page, behind the same token as /metrics.
  const operatorPage = operatorPageSetting(values, io)
    ? metricsToken === undefined
      ? {}
      : { token: metricsToken }
    : undefined;
  const { trustProxy, clientAddressHeader, limits } = limitSettings(values, io);
  const checkOrigins = checkOriginSettings(values, io);
  const admission = admissionSettings(values, io);
  const perHost = deliveryPerHostSetting(values, io);
  const retention = retentionSettings(values, io);
  const disableAfter = endpointDisableAfterSetting(values, io);
  const operatorWebhook = await operatorWebhookSetting(values, io);
  if (settings.smtp === undefined && !isLoopbackAddress(listen.host)) {
    // A refusal of the settings, in one line, before anything starts.
    io.stderr(
      `doorbell serve: --host ${listen.host} serves beyond this machine, but without --smtp (${ENV.smtp}) every mail, with its confirm and manage links, would go to the local mailbox page; configure --smtp or listen on 127.0.0.1\n`,
    );
    return 2;
  }

  const holder = await createHolder({
    dataDir: settings.dataDir,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    publicUrl: settings.publicUrl,
    ...(settings.smtp === undefined ? {} : { smtp: settings.smtp }),
    ...(settings.mailFrom === undefined ? {} : { mailFrom: settings.mailFrom }),
    demo: values["no-demo"] !== true,
    ...(webhookPolicy === undefined ? {} : { webhookPolicy }),
    ...(trustProxy.length === 0 ? {} : { trustProxy, clientAddressHeader }),
    ...(checkOrigins.length === 0 ? {} : { checkTrustedOrigins: checkOrigins }),
    limits,
    mcp: { admission },
    delivery: {
      perHostConcurrency: perHost,
      retentionMs: retention.maxAgeMs,
      deadLetterRetentionMs: retention.deadLetterMaxAgeMs,
      endpointDisableAfterMs: disableAfter.ms,
      ...(operatorWebhook === undefined
        ? {}
        : {
            operatorWebhook: {
              url: operatorWebhook.url,
              ...(operatorWebhook.secret === undefined ? {} : { secret: operatorWebhook.secret }),
            },
          }),
    },
    ...(settings.digestWindowMs === undefined ? {} : { config: { digestWindowMs: settings.digestWindowMs } }),
    env: io.env,
    log,
    ...(metrics === undefined ? {} : { metrics }),
    ...(operatorPage === undefined ? {} : { operatorPage }),
  });
  const address = await listenOrClose(holder, listen);

  const s = holder.summary;
  const demo =
    s.demo === undefined
      ? "off (--no-demo)"
      : s.demo.skipped
        ? "already imported"
        : `imported ${s.demo.imported.toLocaleString("en-US")} offers`;
  const rows: [string, string][] = [
    ["MCP endpoint", s.mcpUrl],
    ["Pages", `${s.publicUrl}/ (consent, confirm and manage pages open from the links the holder gives)`],
    [
      "Mailbox",
      s.mailboxUrl === undefined
        ? `none: ${s.mail}`
        : `${s.mailboxUrl} (no SMTP configured: every mail lands here)`,
    ],
    ["Descriptor", `${s.publicUrl}/.well-known/isto-intents.json`],
    ["Database", s.database],
    ["Seal keys", keysLine(s.keys, s.keyFile)],
    ["Demo catalogue", demo],
    [
      "Doorbells",
      s.webhookPolicy === "production"
        ? "push profile; endpoints must be https:443 with public addresses"
        : "push profile; development policy: loopback and http endpoints allowed",
    ],
    [
      "Sign-in",
      s.oauth === "off"
        ? "none (consent-link only)"
        : `OAuth 2.1 for assistants (${s.oauth === "built-in" ? `${s.publicUrl}/oauth` : "external issuer"}; metadata at /.well-known/oauth-protected-resource/mcp)`,
    ],
    [
      "Match digests",
      s.digestWindowMs === 0
        ? "each import's matches mailed at once (--digest-window 0)"
        : `at most one per intent every ${s.digestWindowMs / 60_000} minutes (--digest-window)`,
    ],
    [
      "MCP admission",
      `${admission.concurrent.toLocaleString("en-US")} requests at once per process, ${admission.waiting.toLocaleString("en-US")} waiting; then 503 (--mcp-concurrency, --mcp-queue); ${heapBoundText(admission.heapBound)}`,
    ],
    [
      "Delivery",
      `at most ${perHost} doorbell subscriptions of one host at once per process (--delivery-per-host); failed attempts kept ${retention.retentionDays} days, dead letters ${retention.deadLetterDays} (--retention-days, --dead-letter-days)`,
    ],
    [
      "Endpoint health",
      `an endpoint failing every attempt for ${disableAfter.text} is disabled (--endpoint-disable-after); doorbell endpoints list shows them`,
    ],
    ["Operator webhook", operatorWebhookLine(s.operatorWebhook)],
    [
      "Egress",
      s.webhookPolicy === "production"
        ? "production policy: doorbells and client metadata fetches go to https:443 on public addresses only"
        : "DEVELOPMENT policy: doorbells and client metadata fetches may go to http and loopback addresses; not for production (--smtp or --webhook-policy production)",
    ],
    [
      "Client address",
      trustProxy.length === 0
        ? "the TCP peer (no --trust-proxy; no forwarding header is read)"
        : `from ${HEADER_NAMES[clientAddressHeader]} when sent by ${trustProxy.join(", ")}; ${HEADER_NAMES[clientAddressHeader === "forwarded" ? "x-forwarded-for" : "forwarded"]} is ignored (--client-address-header)`,
    ],
    [
      "Record checker",
      s.checkTrustedOrigins.length === 0
        ? `${s.publicUrl}/check (no key page host trusted: visitors give the key pages; --check-origin)`
        : `${s.publicUrl}/check (key pages fetched from ${s.checkTrustedOrigins.join(", ")})`,
    ],
    [
      "Metrics",
      metrics === undefined
        ? "off (--metrics turns GET /metrics on)"
        : `${s.publicUrl}/metrics${metrics.token === undefined ? " (no token: loopback only)" : " (bearer token from DOORBELL_METRICS_TOKEN)"}`,
    ],
    [
      "Operator page",
      operatorPage === undefined
        ? "off (--operator-page turns /operator on)"
        : `${s.publicUrl}/operator${operatorPage.token === undefined ? " (no token: loopback only)" : " (the metrics token from DOORBELL_METRICS_TOKEN, as a bearer token or Basic password)"}`,
    ],
    ["Active intents", String(s.activeIntents)],
    ["Listening on", `${address.host}:${address.port}`],
  ];
  printSummary(
    io,
    `${s.name} (Isto Intents MCP binding 0.1, consent-link and push profiles)`,
    rows,
    s.mcpUrl,
  );
  control.onListening?.(holder, address);
  await untilStopped(io, control.until);
  await holder.close();
  return 0;
}

/** The operator webhook's summary line: its origin and where its secret came from, never the secret. */
/** The summary's words for the heap bound. */
function heapBoundText(bound: number): string {
  if (!Number.isFinite(bound)) return "no heap bound (--heap-bound 0)";
  const mb = Math.round(bound / (1024 * 1024)).toLocaleString("en-US");
  return `no new request while the JavaScript heap is over ${mb} MB (--heap-bound)`;
}

function operatorWebhookLine(webhook: Holder["summary"]["operatorWebhook"]): string {
  if (webhook === undefined)
    return "off (--operator-webhook URL sends endpoint.disabled, endpoint.recovered, delivery.exhausted)";
  const secret =
    webhook.secret === "generated"
      ? `a new signing secret, written to ${webhook.secretFile}`
      : webhook.secret === "kept"
        ? "the signing secret kept from an earlier start"
        : "the signing secret given";
  return `${webhook.origin} (Standard Webhooks, ${secret})`;
}

/** The forwarding headers as the summary names them. */
const HEADER_NAMES: Record<ClientAddressHeader, string> = {
  "x-forwarded-for": "X-Forwarded-For",
  forwarded: "Forwarded",
};

/** 127.0.0.0/8, ::1 or localhost: only this machine can connect. */
function isLoopbackAddress(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, "").toLowerCase();
  return name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
