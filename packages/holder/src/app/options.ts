/**
 * What createHolder is asked for (CreateHolderOptions), what it returns (Holder), and the settings
 * every step reads, resolved from the options once.
 */
import path from "node:path";
import { createKeyResolver } from "@doorbell/agreements";
import type { DeliveryEngine } from "@doorbell/delivery";
import type { LoadedKeyring } from "@doorbell/store";
import { type Logger, pino } from "pino";
import { defaultConfig, type HolderConfig, type HolderContext } from "../context.js";
import type { HolderEvents, HolderEventsOptions } from "../events/index.js";
import type { ClientAddressHeader, HolderLimits, LimitBucket, LimitRule } from "../limits/index.js";
import type { HolderMcpEndpoint, McpHandlerOptions } from "../mcp/handler.js";
import type { HolderOAuthOptions } from "../oauth/index.js";
import type { HolderMetrics } from "../observability/metrics.js";
import type { MetricsOptions } from "../observability/metrics-route.js";
import type { OperatorPageOptions } from "../operator/operator-access.js";
import type { EndpointHealthDelivery, OperatorWebhookSummary } from "./operator-webhook.js";
import type { RetentionOptions } from "./retention.js";
import type { HolderServices } from "./services.js";

export interface CreateHolderOptions {
  /** Where the SQLite file and the generated seal-key file live (default `.doorbell`). */
  dataDir?: string;
  /** A `postgres://` URL, or a SQLite file (default `<dataDir>/holder.sqlite`). */
  database?: string;
  /** The public origin of the pages and the MCP endpoint (default http://127.0.0.1:8080). */
  publicUrl?: string;
  /** `smtp://user:pass@host:587` or `smtps://…`; without it, mail goes to the local mailbox page. */
  smtp?: string;
  /** The sender of the holder's mail when SMTP is used. */
  mailFrom?: string;
  /** Import the built-in demo catalogue when the database has no demo offers yet (default false). */
  demo?: boolean;
  /**
   * Run the delivery worker and take part in background work (expiry, push sweep, digests that
   * waited, purges). Default true. `false` for a process that only imports (`doorbell catalogue
   * import`): the doorbells its import queues are delivered by the serve processes, under their
   * egress policy and with their lifetime, not by a short-lived process under another policy.
   */
  background?: boolean;
  /** Overrides of the defaults (consent text, TTLs, demand threshold, name). */
  config?: Partial<Omit<HolderConfig, "publicUrl">>;
  /**
   * Where doorbells may go: `production` (https:443, public addresses only) or `development`
   * (loopback and http too, for a demo on one machine). Default: development with the local
   * mailbox (a holder that only serves loopback anyway), production with SMTP.
   */
  webhookPolicy?: "production" | "development";
  /**
   * Proxies (CIDRs) whose forwarding header names the client address that limits are keyed on.
   * Default: none (the TCP peer is the client).
   */
  trustProxy?: readonly string[];
  /**
   * The one header those proxies write, `x-forwarded-for` (default) or `forwarded`; the other is
   * never read, since a proxy passes it through as the client sent it.
   */
  clientAddressHeader?: ClientAddressHeader;
  /** The shared limits that differ from limits/rules.ts DEFAULT_LIMITS. */
  limits?: Partial<Record<LimitBucket, LimitRule>>;
  /** More host names the holder answers for (besides the public URL's). */
  allowedHosts?: readonly string[];
  /**
   * Origins whose key pages the public record checker at /check fetches, e.g.
   * `https://api.stackshift.cloud`, through the holder's egress policy. Default: none, and a
   * visitor gives the signers' key pages with the record.
   */
  checkTrustedOrigins?: readonly string[];
  /** Options of the MCP endpoint (rate limits, sessions, extra hosts and origins). */
  mcp?: Omit<McpHandlerOptions, "publicUrl" | "clock" | "log">;
  /** Languages statements and catalogue may be written in (descriptor). Default sk, cs, en. */
  languages?: readonly string[];
  /** A seal-key file written by the operator; else DOORBELL_SEAL_KEYS, else `<dataDir>/seal-keys`. */
  keyFile?: string;
  env?: Record<string, string | undefined>;
  /** How often drafts and intents past their end are expired (default 60 s). */
  expiryIntervalMs?: number;
  /**
   * The delivery worker: `perHostConcurrency`, doorbell subscriptions of one destination host
   * handled at once by this process (default 8 of the worker's 16); and how long the delivery log
   * keeps failed attempts and replayed dead letters (`retentionMs`, default 30 days) and dead
   * letters never replayed (`deadLetterRetentionMs`, default 90 days). An endpoint failing every
   * attempt for `endpointDisableAfterMs` (default 5 days) is disabled, and `operatorWebhook` is
   * told (operator-webhook.ts).
   */
  delivery?: RetentionOptions & { perHostConcurrency?: number } & EndpointHealthDelivery;
  /**
   * MCP Events on the MCP endpoint (`intent.matches.delivered`, `intent.status.changed`; on by
   * default, webhooks under `webhookPolicy`); `false` turns it off, `tuning` sets its intervals.
   */
  events?: false | Pick<HolderEventsOptions, "tuning">;
  /**
   * The OAuth 2.1 profile of the buyer tools: the built-in authorization server under /oauth
   * (default, or `{ ttl }`), `{ external: { issuer } }` for an external issuer, or `false` for
   * none (consent-link only).
   */
  oauth?: false | HolderOAuthOptions;
  /**
   * Serve GET /metrics (Prometheus text). Without a token only on a holder that is loopback on
   * both its listening address and its public URL; `listen` refuses otherwise.
   */
  metrics?: MetricsOptions;
  /**
   * Serve the operator page at /operator (endpoint health, the delivery chart, failed attempts,
   * dead letters and their replay); off unless given. Guarded like `metrics`: with a token every
   * request needs it, without one only a loopback holder serves it and `listen` refuses otherwise.
   */
  operatorPage?: OperatorPageOptions;
  /** One access-log line per request at info level (default on); `false` for none. */
  accessLog?: false;
  clock?: () => number;
  log?: Logger;
}

export interface Holder {
  /** The whole HTTP surface, web-standard. */
  fetch(request: Request): Promise<Response>;
  /** Serves on a port (0: any free one); resolves with where. */
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  /** Stops serving, the timer and the sessions, then closes the database. */
  close(): Promise<void>;
  readonly context: HolderContext;
  readonly services: HolderServices;
  /** The delivery engine that rings the agents' doorbells. */
  readonly delivery: DeliveryEngine;
  /** The MCP Events server of the MCP endpoint, unless `events: false`. */
  readonly events: HolderEvents | undefined;
  readonly mcp: HolderMcpEndpoint;
  readonly summary: HolderSummary;
  /**
   * The client address of a request (trust-proxy aware, IPv6 by /64) and the limits shared by
   * every process on the database (limits/holder-limits.ts).
   */
  readonly limits: HolderLimits;
  /** The counters behind /metrics (the MCP handler reports tool calls here). */
  readonly metrics: HolderMetrics;
}

const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080";
export const DEFAULT_LANGUAGES = ["sk", "cs", "en"] as const;

/** What every step of createHolder reads, resolved from the options once. */
export interface HolderSettings {
  dataDir: string;
  clock: () => number;
  log: Logger;
  publicUrl: string;
  config: HolderConfig;
  checkOrigins: readonly string[];
  webhookPolicy: "production" | "development";
}

export function resolveHolderSettings(options: CreateHolderOptions): HolderSettings {
  const dataDir = path.resolve(options.dataDir ?? ".doorbell");
  const publicUrl = (options.publicUrl ?? DEFAULT_PUBLIC_URL).replace(/\/+$/, "");
  // A bad origin is refused here, before anything opens, not at the first visit to /check.
  const checkOrigins = options.checkTrustedOrigins ?? [];
  if (checkOrigins.length > 0) createKeyResolver({ trustedOrigins: checkOrigins });
  return {
    dataDir,
    clock: options.clock ?? Date.now,
    log: options.log ?? pino({ level: "info" }),
    publicUrl,
    config: { ...defaultConfig(publicUrl), ...options.config, publicUrl },
    checkOrigins,
    webhookPolicy: options.webhookPolicy ?? (options.smtp === undefined ? "development" : "production"),
  };
}

export interface HolderSummary {
  name: string;
  publicUrl: string;
  mcpUrl: string;
  database: string;
  dialect: "sqlite" | "postgres";
  keys: LoadedKeyring["source"];
  keyFile?: string;
  mail: string;
  /** The dev mailbox's unguessable address (printed in the start-up summary). */
  mailboxUrl?: string;
  demo: { imported: number; skipped: boolean } | undefined;
  activeIntents: number;
  /** Where doorbells may go (see `CreateHolderOptions.webhookPolicy`). */
  webhookPolicy: "production" | "development";
  /** Signed-in buyers: the built-in authorization server, an external issuer, or none. */
  oauth: "built-in" | "external" | "off";
  /** Where /check fetches key pages from; empty: visitors give them. */
  checkTrustedOrigins: readonly string[];
  /** At most one match digest per intent in this long; 0: every import's at once. */
  digestWindowMs: number;
  /** Where operational events go, when configured (and this process serves in the background). */
  operatorWebhook?: OperatorWebhookSummary;
}
