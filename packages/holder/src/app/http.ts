/**
 * The holder's HTTP surface: the web app over the services (pages, MCP endpoint, documents,
 * health, metrics) and, on Node, the OAuth server's own routes beside it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createKeyPageFetcher } from "@doorbell/agreements";
import type { DeliveryEngine, DeliveryTables } from "@doorbell/delivery";
import { MCP_PATH, type NodeRoute, nodeServers } from "@doorbell/mcp-endpoint";
import { asTables, sql } from "@doorbell/store";
import type { HolderLimits } from "../limits/index.js";
import type { HolderMcpEndpoint } from "../mcp/handler.js";
import { assistantsOfIntent, type HolderOAuth } from "../oauth/index.js";
import { type createAccessLogger, logNodeRequest } from "../observability/access-log.js";
import type { HolderMetrics } from "../observability/metrics.js";
import type { PushService } from "../push/service.js";
import { createHolderApp } from "../web/app.js";
import type { HolderHosts } from "./context.js";
import type { HolderMail } from "./mail.js";
import { holderMigrationsCurrent, type OpenedStore } from "./open.js";
import { type CreateHolderOptions, DEFAULT_LANGUAGES, type HolderSettings } from "./options.js";
import type { HolderServices } from "./services.js";

type AccessLog = ReturnType<typeof createAccessLogger>;

export interface HolderHttpParts {
  opened: OpenedStore;
  settings: HolderSettings;
  services: HolderServices;
  push: PushService;
  mcp: HolderMcpEndpoint;
  mail: HolderMail;
  hosts: HolderHosts;
  limits: HolderLimits;
  oauth: HolderOAuth | undefined;
  metrics: HolderMetrics;
  accessLog: AccessLog;
  /** The delivery engine, whose figures the operator page flushes before reading them. */
  delivery: DeliveryEngine;
  /** True from the moment close() starts draining: /readyz answers 503. */
  draining: () => boolean;
}

export function holderHttp(
  options: CreateHolderOptions,
  parts: HolderHttpParts,
): ReturnType<typeof createHolderApp> {
  const { opened, settings, services, mail, oauth } = parts;
  const { store } = opened;
  const { checkOrigins } = settings;
  return createHolderApp({
    config: settings.config,
    ...(checkOrigins.length === 0
      ? {}
      : {
          check: {
            trustedOrigins: checkOrigins,
            source: createKeyPageFetcher({ policy: parts.hosts.egress() }),
          },
        }),
    services: {
      intents: services.intents,
      consent: services.consent,
      matches: services.matching,
      demand: services.demand,
      push: parts.push,
    },
    mcp: parts.mcp,
    ...(mail.mailbox === undefined ? {} : { mailbox: mail.mailbox }),
    ...(mail.mailboxPath === undefined ? {} : { mailboxPath: mail.mailboxPath }),
    hosts: parts.hosts.policy,
    limits: parts.limits,
    languages: options.languages ?? DEFAULT_LANGUAGES,
    healthy: async () => {
      await sql`select 1`.execute(store.db);
      return true;
    },
    ready: async () => !parts.draining() && (await holderMigrationsCurrent(opened)),
    ...(oauth === undefined ? {} : { oauth }),
    ...(oauth?.access === undefined ? {} : { assistants: assistantsOfIntent(store, oauth.access) }),
    log: settings.log,
    ...(options.accessLog === false ? {} : { accessLog: parts.accessLog }),
    ...(options.metrics === undefined
      ? {}
      : { metrics: { metrics: parts.metrics, options: options.metrics } }),
    ...(options.operatorPage === undefined
      ? {}
      : {
          operator: {
            store: asTables<DeliveryTables>(opened.handle),
            delivery: parts.delivery,
            holderName: settings.config.name,
            publicUrl: settings.publicUrl,
            clock: settings.clock,
            log: settings.log,
            options: options.operatorPage,
          },
        }),
  });
}

/**
 * The app on Node: in front of it the MCP endpoint's quick call (a plain pull answered on the
 * Node request, quick-call.ts) and the OAuth server's Node routes, which bypass the app; both
 * logged here.
 */
export function holderNodeServers(
  fetch: Parameters<typeof nodeServers>[0],
  parts: {
    oauth: HolderOAuth | undefined;
    accessLog: AccessLog | undefined;
    mcp: HolderMcpEndpoint;
    hosts: HolderHosts;
    limits: HolderLimits;
    metrics: HolderMetrics;
  },
) {
  const { oauth, accessLog } = parts;
  return nodeServers(fetch, [
    ...quickMcpRoutes(parts),
    ...(oauth?.nodeRoutes ?? []).map((route) => ({
      matches: (path: string) => route.matches(path),
      handle(req: IncomingMessage, res: ServerResponse) {
        if (accessLog !== undefined) logNodeRequest(accessLog, req, res, () => route.routeOf(req));
        route.handle(req, res);
      },
    })),
  ]);
}

/**
 * POST /mcp with the endpoint's quick call in front, after the checks the app makes first: the
 * Host allow-list, and a request with a token goes to the app (OAuth's challenge is its to give).
 * A request the quick call does not take goes on to the app, its body with it.
 */
function quickMcpRoutes(parts: {
  accessLog: AccessLog | undefined;
  mcp: HolderMcpEndpoint;
  hosts: HolderHosts;
  limits: HolderLimits;
  metrics: HolderMetrics;
}): NodeRoute[] {
  const { quick } = parts.mcp;
  if (quick === undefined) return [];
  const { accessLog, hosts, limits, metrics } = parts;
  return [
    {
      matches: (path) => path === MCP_PATH,
      handle(req, res, next) {
        if (req.method !== "POST" || req.url !== MCP_PATH || !hosts.allowed(req.headers.host)) return next();
        const peer = req.socket.remoteAddress;
        const clientKey =
          limits.clientKey(peer, req.headers) ?? (peer === undefined ? undefined : `addr:${peer}`);
        const answering = () => {
          metrics.countQuickCall();
          if (accessLog !== undefined) logNodeRequest(accessLog, req, res, () => MCP_PATH);
        };
        quick(req, res, clientKey, answering).then(
          (outcome) => {
            if (!outcome.answered) next(outcome.body);
          },
          () => {
            // Nothing in the quick call throws past its own answers; were it to, the body may be
            // gone, so the request is answered here rather than handed on.
            if (!res.headersSent) res.writeHead(500).end();
          },
        );
      },
    },
  ];
}
