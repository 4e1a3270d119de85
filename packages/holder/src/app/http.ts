/**
 * The holder's HTTP surface: the web app over the services (pages, MCP endpoint, documents,
 * health, metrics) and, on Node, the OAuth server's own routes beside it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createKeyPageFetcher } from "@doorbell/agreements";
import type { DeliveryEngine, DeliveryTables } from "@doorbell/delivery";
import { nodeServers } from "@doorbell/mcp-endpoint";
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

/** The app on Node, with the OAuth server's Node routes, which bypass the app, logged here. */
export function holderNodeServers(
  fetch: Parameters<typeof nodeServers>[0],
  oauth: HolderOAuth | undefined,
  accessLog: AccessLog | undefined,
) {
  return nodeServers(
    fetch,
    (oauth?.nodeRoutes ?? []).map((route) => ({
      matches: (path: string) => route.matches(path),
      handle(req: IncomingMessage, res: ServerResponse) {
        if (accessLog !== undefined) logNodeRequest(accessLog, req, res, () => route.routeOf(req));
        route.handle(req, res);
      },
    })),
  );
}
