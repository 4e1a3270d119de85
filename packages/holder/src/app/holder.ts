/**
 * A whole holder in one call: store (a SQLite file under the data directory by default, or a
 * PostgreSQL URL), migrations, seal keys, the context, the services wired together, the matching
 * index, the expiry timer, the MCP endpoint and the pages — `{ fetch, listen, close }`.
 *
 * The wiring (createHolderServices, app/services.ts) is the one place the parts meet.
 */
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { createKeyPageFetcher, createKeyResolver } from "@doorbell/agreements";
import {
  createDeliveryEngine,
  type DeliveryEngine,
  type DeliveryTables,
  deliveryMigrations,
  type Worker,
} from "@doorbell/delivery";
import { isLoopbackHost, MCP_PATH, nodeServers } from "@doorbell/mcp-endpoint";
import { type EventsTables, eventsMigrations } from "@doorbell/mcp-events";
import {
  checkSealKeys,
  createCodeHasher,
  createSealer,
  type Database,
  leadershipMigrations,
  loadKeyring,
  migrate,
  migrationsCurrent,
  notificationMigrations,
  openDatabase,
  sql,
} from "@doorbell/store";
import { developmentPolicy, type EgressPolicy, productionPolicy } from "@doorbell/webhooks";
import { type Logger, pino } from "pino";
import { demoCatalogue } from "../catalogue/demo-catalogue.js";
import { type Background, startBackground } from "../cluster/background.js";
import { type ChangeBus, startChangeBus } from "../cluster/change-bus.js";
import { type IntentFeed, startIntentFeed } from "../cluster/intent-feed.js";
import { DIGEST_WINDOW_MS } from "../consent/index.js";
import { defaultConfig, type HolderConfig, type HolderContext } from "../context.js";
import {
  createHolderEvents,
  createIntentChangeFeed,
  type HolderEvents,
  type HolderEventsOptions,
} from "../events/index.js";
import { createHostAllowList } from "../html/host-guard.js";
import {
  createHolderLimits,
  type HolderLimits,
  type LimitBucket,
  type LimitRule,
  limitsMigrations,
} from "../limits/index.js";
import type { SmtpMailer } from "../mail/smtp.js";
import type { HolderMcpEndpoint, McpHandlerOptions } from "../mcp/handler.js";
import type { OfferService } from "../model/services.js";
import type { HolderTables } from "../model/tables.js";
import {
  assistantsOfIntent,
  createHolderOAuth,
  type HolderOAuth,
  type HolderOAuthOptions,
  oauthMigrations,
} from "../oauth/index.js";

import { createAccessLogger, logNodeRequest } from "../observability/access-log.js";
import { createHolderMetrics, type HolderMetrics } from "../observability/metrics.js";
import type { MetricsOptions } from "../observability/metrics-route.js";
import { oldestPendingAgeMs } from "../observability/outbox-age.js";
import { ownHosts } from "../own-hosts.js";
import { coalescedMatchesDoorbell } from "../push/coalesced-doorbell.js";
import { pushMigrations } from "../push/schema.js";
import type { PushService } from "../push/service.js";
import { createHolderApp } from "../web/app.js";
import { closeAfterFailedStart, drainAndClose, listenGuarded } from "./lifecycle.js";
import { openHolderMail } from "./mail.js";
import { createHolderMcp } from "./mcp.js";
import { holderMigrations } from "./migrations.js";
import { createHolderServices, type HolderServices } from "./services.js";
import type { HolderSummary } from "./summary.js";

export type { HolderSummary } from "./summary.js";

/**
 * Where the holder may ring doorbells. Production (the push profile's rule 1: https on 443, public
 * addresses only, never one of the holder's own names or addresses: `ownHosts`) unless asked for
 * development, which also allows http and loopback endpoints for a demo on one machine.
 */
export function holderEgressPolicy(
  mode: "production" | "development",
  publicUrl: string,
  allowedHosts: readonly string[] = [],
): EgressPolicy {
  if (mode === "development") return developmentPolicy();
  const own = ownHosts(publicUrl, allowedHosts);
  return productionPolicy({ blockedHosts: own.names, blockedSubnets: own.addresses });
}

/** The demo catalogue's refs all start so (offers/demo-catalogue.ts). */
const DEMO_REF_PREFIX = "demo-";

/**
 * Imports the built-in demo catalogue unless the database already holds demo offers, so a
 * restart neither re-imports nor re-matches it. Offers are dated in the 60 days before now.
 */
export async function importDemoCatalogueOnce(
  ctx: HolderContext,
  offers: OfferService,
): Promise<{ imported: number; skipped: boolean }> {
  const existing = await ctx.store.db
    .selectFrom("holder_offers")
    .select("id")
    .where("source_kind", "=", "catalogue")
    .where("source_ref", "like", `${DEMO_REF_PREFIX}%`)
    .limit(1)
    .executeTakeFirst();
  if (existing !== undefined) return { imported: 0, skipped: true };
  const result = await offers.importCatalogue(demoCatalogue({ now: ctx.clock() }));
  return { imported: result.inserted + result.updated, skipped: false };
}

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
   * Issue #14 item 1: proxies (CIDRs) whose Forwarded / X-Forwarded-For name the client address
   * that limits are keyed on. Default: none (the TCP peer is the client).
   */
  trustProxy?: readonly string[];
  /** Issue #16 / #14: the shared limits that differ from limits/rules.ts DEFAULT_LIMITS. */
  limits?: Partial<Record<LimitBucket, LimitRule>>;
  /** Issue #16 item 1: more host names the holder answers for (besides the public URL's). */
  allowedHosts?: readonly string[];
  /**
   * Issue #18: origins whose key pages the public record checker at /check fetches, e.g.
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
   * MCP Events on the MCP endpoint (`intent.matches.delivered`, `intent.status.changed`; on by
   * default, webhooks under `webhookPolicy`); `false` turns it off, `tuning` sets its intervals.
   */
  events?: false | Pick<HolderEventsOptions, "tuning">;
  /**
   * Issue #8, the OAuth 2.1 profile of the buyer tools: the built-in authorization server under
   * /oauth (default, or `{ ttl }`), `{ external: { issuer } }` for an external issuer, or `false`
   * for none (consent-link only).
   */
  oauth?: false | HolderOAuthOptions;
  /**
   * Issue #17: serve GET /metrics (Prometheus text). Without a token only on a holder that is
   * loopback on both its listening address and its public URL; `listen` refuses otherwise.
   */
  metrics?: MetricsOptions;
  /** Issue #17: one access-log line per request at info level (default on); `false` for none. */
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
   * Issue #14 item 1: the client address of a request (trust-proxy aware, IPv6 by /64) and the
   * limits shared by every process on the database (limits/holder-limits.ts).
   */
  readonly limits: HolderLimits;
  /** Issue #17: the counters behind /metrics (the MCP handler reports tool calls here). */
  readonly metrics: HolderMetrics;
}

/** How long requests in flight get to finish on close before long-lived streams (MCP, events) are ended. */
const DEFAULT_PUBLIC_URL = "http://127.0.0.1:8080";
export const DEFAULT_LANGUAGES = ["sk", "cs", "en"] as const;

export async function createHolder(options: CreateHolderOptions = {}): Promise<Holder> {
  const dataDir = path.resolve(options.dataDir ?? ".doorbell");
  const clock = options.clock ?? Date.now;
  const log = options.log ?? pino({ level: "info" });
  const publicUrl = (options.publicUrl ?? DEFAULT_PUBLIC_URL).replace(/\/+$/, "");
  const config: HolderConfig = { ...defaultConfig(publicUrl), ...options.config, publicUrl };
  // A bad origin is refused here, before anything opens, not at the first visit to /check.
  const checkOrigins = options.checkTrustedOrigins ?? [];
  if (checkOrigins.length > 0) createKeyResolver({ trustedOrigins: checkOrigins });

  let databaseUrl = options.database;
  if (databaseUrl === undefined) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    databaseUrl = path.join(dataDir, "holder.sqlite");
  }
  const keys = loadKeyring({
    ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
    ...(options.env === undefined ? {} : { env: options.env }),
    dataDir,
  });
  const store = (await openDatabase({ url: databaseUrl })) as unknown as Database<HolderTables>;
  let smtp: SmtpMailer | undefined;
  let mcp: HolderMcpEndpoint | undefined;
  let worker: Worker | undefined;
  let background: Background | undefined;
  let feed: IntentFeed | undefined;
  let bus: ChangeBus | undefined;
  let events: HolderEvents | undefined;
  let limits: HolderLimits | undefined;
  let listeningOnLoopback = false;
  // Issue #14: /readyz answers 503 from the moment close() starts draining.
  let draining = false;
  const schema = [
    holderMigrations,
    deliveryMigrations,
    pushMigrations,
    oauthMigrations,
    limitsMigrations,
    leadershipMigrations,
    notificationMigrations,
    eventsMigrations,
  ];
  try {
    await migrate(store, schema);
    // Issue #14: a process whose seal keys differ from the other processes' refuses to start.
    await checkSealKeys(store as unknown as Database, keys.keyring);
    const sealer = createSealer(keys.keyring);
    const metrics = createHolderMetrics();
    const mail = openHolderMail({ ...options, config, store, sealer, clock });
    smtp = mail.smtp;
    const { mailer, mailbox, mailboxPath } = mail;
    const context: HolderContext = {
      store,
      sealer,
      codes: createCodeHasher(keys.keyring, "holder.codes"),
      contacts: createCodeHasher(keys.keyring, "holder.contacts"),
      mailer: metrics.countMail(mailer),
      config,
      clock,
      log,
    };
    const mcpLimits = createHolderLimits({
      store: store as unknown as Database,
      hasher: createCodeHasher(keys.keyring, "holder.limits"),
      ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
      ...(options.limits === undefined ? {} : { rules: options.limits }),
      onError: (error) =>
        log.warn({ event: "limits.failed", error: error.name }, "a shared limit could not be counted"),
    });
    limits = mcpLimits;
    // Issue #16 item 1: one Host allow-list; loopback names once the holder listens on loopback.
    const publicHost = new URL(publicUrl).hostname.replace(/^\[|\]$/g, "");
    const hostPolicy = {
      publicUrl,
      allowedHosts: [...(options.allowedHosts ?? []), ...(options.mcp?.allowedHosts ?? [])],
      loopback: () => isLoopbackHost(publicHost) || listeningOnLoopback,
    };
    const hostAllowed = createHostAllowList(hostPolicy);
    const webhookPolicy =
      options.webhookPolicy ?? (options.smtp === undefined ? "development" : "production");
    const delivery = createDeliveryEngine({
      store: store as unknown as Parameters<typeof createDeliveryEngine>[0]["store"],
      sealer,
      policy: holderEgressPolicy(webhookPolicy, publicUrl, hostPolicy.allowedHosts),
      clock,
      coalesce: coalescedMatchesDoorbell,
      logger: log.child({ component: "delivery" }),
    });
    metrics.include(delivery.metrics.registry);
    metrics.watchPendingAge(() =>
      oldestPendingAgeMs(store.db as unknown as Parameters<typeof oldestPendingAgeMs>[0], clock()),
    );
    // What changed, told to this process's listeners (MCP Events) and to every other process.
    const changes = createIntentChangeFeed();
    bus = await startChangeBus({
      store: store as unknown as Database,
      log,
      listeners: { intents: changes, resync: () => events?.resync() },
    });
    // Issue #8: the OAuth profile (authorization server or external issuer, protected resource).
    const oauth: HolderOAuth | undefined =
      options.oauth === false
        ? undefined
        : await createHolderOAuth(
            { ...context, store: store as unknown as Parameters<typeof createHolderOAuth>[0]["store"] },
            {
              ...(options.oauth ?? {}),
              resource: `${publicUrl}${MCP_PATH}`,
              egress: holderEgressPolicy(webhookPolicy, publicUrl, hostPolicy.allowedHosts),
              limits,
              hostAllowed: (host) => hostAllowed(host),
            },
          );
    const services = createHolderServices(context, {
      push: { engine: delivery },
      changes: bus.changes,
      ...(oauth === undefined ? {} : { intents: oauth.intentOptions }),
    });
    services.offers = metrics.countImports(services.offers);
    const push = services.push as PushService;
    bus.follow(push);
    const demo = options.demo ? await importDemoCatalogueOnce(context, services.offers) : undefined;
    const { activeIntents } = await services.matching.start();
    // Issue #14: the index follows intents activated, changed and ended in other processes.
    feed = await startIntentFeed({ store: store as unknown as Database, matching: services.matching, log });
    if (options.events !== false) {
      events = await createHolderEvents({
        db: store.db,
        intents: services.intents,
        clock,
        // The subscriptions and their outbox in the holder's database, delivered by its worker.
        webhook: {
          policy: holderEgressPolicy(webhookPolicy, publicUrl, hostPolicy.allowedHosts),
          store: store as unknown as Database<DeliveryTables & EventsTables>,
          sealer,
          engine: delivery,
        },
        ...(options.events?.tuning === undefined ? {} : { tuning: options.events.tuning }),
      });
      changes.listen(events);
    }

    const endpoint = createHolderMcp(services, {
      ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
      publicUrl,
      clock,
      log,
      metrics,
      limits: mcpLimits,
      ...(events === undefined ? {} : { events }),
      ...(oauth === undefined ? {} : { oauth }),
    });
    mcp = endpoint;
    metrics.watchAdmission(endpoint.admission);
    const accessLog = createAccessLogger(log, metrics);
    const app = createHolderApp({
      config,
      ...(checkOrigins.length === 0
        ? {}
        : {
            check: {
              trustedOrigins: checkOrigins,
              source: createKeyPageFetcher({
                policy: holderEgressPolicy(webhookPolicy, publicUrl, hostPolicy.allowedHosts),
              }),
            },
          }),
      services: {
        intents: services.intents,
        consent: services.consent,
        matches: services.matching,
        demand: services.demand,
        push,
      },
      mcp,
      ...(mailbox === undefined ? {} : { mailbox }),
      ...(mailboxPath === undefined ? {} : { mailboxPath }),
      hosts: hostPolicy,
      limits,
      languages: options.languages ?? DEFAULT_LANGUAGES,
      healthy: async () => {
        await sql`select 1`.execute(store.db);
        return true;
      },
      ready: async () => !draining && (await migrationsCurrent(store, schema)),
      ...(oauth === undefined ? {} : { oauth }),
      ...(oauth?.access === undefined ? {} : { assistants: assistantsOfIntent(store, oauth.access) }),
      log,
      ...(options.accessLog === false ? {} : { accessLog }),
      ...(options.metrics === undefined ? {} : { metrics: { metrics, options: options.metrics } }),
    });

    // Issue #14: expiry, the push sweep, digests and purges run in one process across all of them.
    if (options.background !== false) {
      background = startBackground({
        store: store as unknown as Database,
        intervalMs: options.expiryIntervalMs ?? 60_000,
        async work() {
          const count = await services.intents.expireDue();
          if (count > 0) log.info({ event: "intents.expired", count }, "intents expired");
          await push.sweep();
          await services.consent.sendDueDigests();
          await oauth?.purgeExpired();
        },
        onError: (error) => log.error({ event: "intents.expire_failed", error: error.name }, error.message),
      });
      await background.tick();
      worker = delivery.worker();
      worker.start();
    }

    const servers = holderNodeServers(app.fetch, oauth, options.accessLog === false ? undefined : accessLog);
    const handler = mcp;
    const sharedLimits = limits;
    const summary: HolderSummary = {
      name: config.name,
      publicUrl,
      mcpUrl: `${publicUrl}${MCP_PATH}`,
      database: store.description,
      dialect: store.dialect,
      keys: keys.source,
      ...(keys.path === undefined ? {} : { keyFile: keys.path }),
      mail: mail.description,
      ...(mailboxPath === undefined ? {} : { mailboxUrl: `${publicUrl}${mailboxPath}` }),
      demo,
      activeIntents,
      webhookPolicy,
      checkTrustedOrigins: checkOrigins,
      digestWindowMs: config.digestWindowMs ?? DIGEST_WINDOW_MS,
      oauth:
        options.oauth === false ? "off" : options.oauth?.external === undefined ? "built-in" : "external",
    };
    let closing: Promise<void> | undefined;
    return {
      fetch: (request) => Promise.resolve(app.fetch(request)),
      async listen(port = 8080, host = "127.0.0.1") {
        const address = await listenGuarded(servers, port, host, {
          localMailbox: mailbox !== undefined,
          metrics: options.metrics,
          publicUrl,
        });
        if (isLoopbackHost(address.host)) listeningOnLoopback = true;
        return address;
      },
      close() {
        closing ??= (async () => {
          // /readyz answers 503 from here on (lifecycle.ts drains in order).
          draining = true;
          await drainAndClose(servers, {
            store,
            mcp: handler,
            events,
            worker,
            background,
            feed,
            bus,
            smtp,
            limits: sharedLimits,
          });
        })();
        return closing;
      },
      context,
      services,
      delivery,
      events,
      mcp: handler,
      summary,
      limits: sharedLimits,
      metrics,
    };
  } catch (error) {
    await closeAfterFailedStart({ store, mcp, events, worker, background, feed, bus, smtp, limits });
    throw error;
  }
}

/** The app on Node, with the OAuth server's Node routes, which bypass the app, logged here. */
function holderNodeServers(
  fetch: Parameters<typeof nodeServers>[0],
  oauth: HolderOAuth | undefined,
  accessLog: ReturnType<typeof createAccessLogger> | undefined,
) {
  return nodeServers(
    fetch,
    (oauth?.nodeRoutes ?? []).map((route) => ({
      matches: (path: string) => route.matches(path),
      handle(req: IncomingMessage, res: ServerResponse) {
        if (accessLog !== undefined) logNodeRequest(accessLog, req, res);
        route.handle(req, res);
      },
    })),
  );
}
