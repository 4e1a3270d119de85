/**
 * The holder's HTTP surface as one Hono app (web-standard `fetch`):
 *
 *   POST|GET|DELETE /mcp                   the MCP endpoint (Streamable HTTP, see mcp/handler.ts)
 *   GET /.well-known/isto-intents.json     the holder descriptor (registry §2 is not public: our shape,
 *                                          schemas/holder-descriptor.schema.json)
 *   GET /.well-known/jwks.json             the holder's signing keys (none yet: the push profile adds them)
 *   GET /healthz                           200 when the database answers, 503 when it does not
 *   GET /readyz                            200 when this process should get traffic (database, migrations, not draining)
 *   GET /metrics                           Prometheus text, when turned on (observability/)
 *   GET /operator                          the operator page, when turned on (operator/)
 *   GET/POST /check                        the public agreement record checker (pages/check-page.tsx)
 *   POST /push/end                         a subscription's receiver ends it (push/subscriber-end-route.ts)
 *   GET /                                  where things are, in plain text
 *   the person's pages                     consent, confirm, manage, dev mailbox (web/pages)
 */
import type { CheckOptions } from "@doorbell/agreements";
import { BUSY_RETRY_AFTER_SECONDS } from "@doorbell/intents/server";
import type { McpHandler } from "@doorbell/mcp-endpoint";
import { MCP_PATH } from "@doorbell/mcp-endpoint";
import { isDatabaseBusy } from "@doorbell/store";
import { type Context, Hono } from "hono";
import type { Logger } from "pino";
import type { HolderConfig } from "../context.js";
import { type HostPolicy, hostGuard } from "../html/host-guard.js";
import { messagesFor } from "../i18n/messages/index.js";
import { requestLanguage } from "../i18n/request-language.js";
import type { HolderLimits } from "../limits/index.js";
import type { LocalMailbox } from "../mail/local-mailbox.js";
import type { ConsentService, DemandService, IntentService, MatchService } from "../model/services.js";
import { type HolderOAuth, type IntentAssistants, PROTECTED_RESOURCE_PATH } from "../oauth/index.js";
import { type AccessLogger, accessLogMiddleware } from "../observability/access-log.js";
import { CLIENT_CLOSED_REQUEST, clientGone } from "../observability/client-gone.js";
import type { HolderMetrics } from "../observability/metrics.js";
import { type MetricsOptions, mountMetrics } from "../observability/metrics-route.js";
import { type OperatorPageDeps, operatorRoutes } from "../operator/operator-routes.js";
import { mountOneClickUnsubscribe } from "../push/one-click-unsubscribe.js";
import type { PushService } from "../push/service.js";
import { mountSubscriberEnd, PUSH_END_PATH } from "../push/subscriber-end-route.js";
import { mountCheckPage } from "./pages/check-page.js";
import { personPages } from "./person-pages.js";

export const DESCRIPTOR_PATH = "/.well-known/isto-intents.json";
export const JWKS_PATH = "/.well-known/jwks.json";

/** The holder descriptor: what a registry and an agent need to find and use this holder. */
export interface HolderDescriptor {
  /** The descriptor's own format version. */
  descriptorVersion: "0.1";
  name: string;
  /** The Isto Intents protocol and binding versions served. */
  protocol: { version: "0.1"; binding: "mcp" };
  profiles: string[];
  countries: string[];
  categories: string[];
  /** BCP 47 tags of the languages statements and catalogue may be written in. */
  languages: string[];
  mcp: { endpoint: string; transport: "streamable-http" };
  /**
   * With the push profile: where a subscription's receiver ends it without the intentCode, with a
   * request signed by the subscription's secret (a forwarder whose agent's side ended).
   */
  push?: { endUrl: string };
  jwksUri: string;
  demandGrid: {
    threshold: number;
    budgetBands: { id: string; currency: string; min: number; max: number | null }[];
  };
}

export interface HolderAppDeps {
  config: HolderConfig;
  services: {
    intents: IntentService;
    consent: ConsentService;
    matches: MatchService;
    demand: DemandService;
    /** The push profile: declared in the descriptor, its pages mounted. */
    push?: PushService;
  };
  mcp: McpHandler;
  /** The local mailbox when no SMTP server is configured (its dev page is mounted then). */
  mailbox?: LocalMailbox;
  /** Where the dev mailbox page is (createHolder makes an unguessable path). */
  mailboxPath?: string;
  languages: readonly string[];
  /** The public agreement checker's trust rule (default: the profile's trusted host). */
  check?: CheckOptions;
  /** Answers when the database does (for /healthz). */
  healthy?: () => Promise<boolean>;
  /** Whether to send this process traffic (for /readyz): database reachable, migrations done, not draining. */
  ready?: () => Promise<boolean>;
  /**
   * The OAuth profile: the protected resource metadata (RFC 9728), the bearer challenge
   * on the MCP endpoint, and the sign-in and consent pages.
   */
  oauth?: HolderOAuth;
  /** OAuth: the manage page's list of the person's assistants and revocation. */
  assistants?: IntentAssistants;
  log: Logger;
  /** One access-log line per request (observability/access-log.ts). */
  accessLog?: AccessLogger;
  /** GET /metrics, only when given (observability/metrics-route.ts). */
  metrics?: { metrics: HolderMetrics; options: MetricsOptions };
  /** GET /operator and its replay form, only when given (operator/operator-routes.tsx). */
  operator?: OperatorPageDeps;
  /**
   * The Host allow-list checked before every route (web/host-guard.ts). Default:
   * the public URL's host, and loopback names when that host is loopback.
   */
  hosts?: Omit<HostPolicy, "publicUrl">;
  /**
   * Client addresses and the limits shared across processes
   * (limits/holder-limits.ts); the pages limit requested mails with it.
   */
  limits?: HolderLimits;
}

/** The node server's socket, when the app runs under @hono/node-server. */
interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: string } };
}

export function holderDescriptor(
  deps: Pick<HolderAppDeps, "config" | "services" | "languages">,
): HolderDescriptor {
  const { config } = deps;
  const grid = deps.services.demand.grid();
  return {
    descriptorVersion: "0.1",
    name: config.name,
    protocol: { version: "0.1", binding: "mcp" },
    profiles: deps.services.push === undefined ? ["consent-link"] : ["consent-link", "push"],
    countries: [...grid.countries],
    categories: [...grid.categories],
    languages: [...deps.languages],
    mcp: { endpoint: `${config.publicUrl}${MCP_PATH}`, transport: "streamable-http" },
    ...(deps.services.push === undefined ? {} : { push: { endUrl: `${config.publicUrl}${PUSH_END_PATH}` } }),
    jwksUri: `${config.publicUrl}${JWKS_PATH}`,
    demandGrid: {
      threshold: grid.threshold,
      budgetBands: grid.budgetBands.map((band) => ({
        id: band.id,
        currency: band.currency,
        min: band.min,
        max: band.max,
      })),
    },
  };
}

/** The plain-text answers' words, in the language the request negotiates (Content-Language says which). */
const plainWords = (c: Context) => messagesFor(requestLanguage(c)).plain;

export function createHolderApp(deps: HolderAppDeps): Hono<{ Bindings: NodeBindings }> {
  const app = new Hono<{ Bindings: NodeBindings }>();
  const descriptor = JSON.stringify(holderDescriptor(deps));
  // Counted under the route that answered; the mailbox's unguessable path is never a label.
  if (deps.accessLog !== undefined) {
    app.use(
      "*",
      accessLogMiddleware(deps.accessLog, deps.mailboxPath === undefined ? [] : [deps.mailboxPath]),
    );
  }
  app.use("*", hostGuard({ ...deps.hosts, publicUrl: deps.config.publicUrl }));

  app.all(MCP_PATH, async (c) => {
    // A request with an Authorization header needs a good token for this resource (401
    // with the RFC 9728 challenge otherwise); one without it goes on (consent-link, intentCode).
    const refused = await deps.oauth?.resource.challenge(c.req.raw);
    if (refused !== undefined) return refused;
    const clientAddress = c.env?.incoming?.socket?.remoteAddress;
    // The limit key of the client a trusted proxy names (IPv6 by /64), else the peer's.
    const clientKey = deps.limits?.clientKey(clientAddress, c.req.raw.headers);
    return deps.mcp(c.req.raw, {
      ...(clientAddress === undefined ? {} : { clientAddress }),
      ...(clientKey === undefined ? {} : { clientKey }),
    });
  });

  // Public documents: anyone (a registry's checker, an agent in a browser) may read them.
  const publicJson = (body: string) =>
    new Response(body, {
      headers: {
        "content-type": "application/json",
        "cache-control": "public, max-age=300",
        "access-control-allow-origin": "*",
        "x-content-type-options": "nosniff",
      },
    });
  app.get(DESCRIPTOR_PATH, () => publicJson(descriptor));
  app.get(JWKS_PATH, () => publicJson(JSON.stringify({ keys: [] })));
  if (deps.oauth !== undefined) {
    // RFC 9728 §3: the path-aware place (…/mcp) and the root one both answer.
    const metadata = JSON.stringify(deps.oauth.resource.metadata);
    app.get(`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, () => publicJson(metadata));
    app.get(PROTECTED_RESOURCE_PATH, () => publicJson(metadata));
    if (deps.oauth.pages !== undefined) app.route("/", deps.oauth.pages);
  }

  if (deps.metrics !== undefined) mountMetrics(app, deps.metrics.metrics, deps.metrics.options);
  if (deps.operator !== undefined) app.route("/", operatorRoutes(deps.operator));

  app.get("/healthz", async (c) => {
    let ok = true;
    try {
      ok = deps.healthy === undefined ? true : await deps.healthy();
    } catch {
      ok = false;
    }
    c.header("cache-control", "no-store");
    return c.json({ status: ok ? "ok" : "unavailable" }, ok ? 200 : 503);
  });

  app.get("/readyz", async (c) => {
    let ok = true;
    try {
      ok = await (deps.ready ?? deps.healthy ?? (async () => true))();
    } catch {
      ok = false;
    }
    c.header("cache-control", "no-store");
    return c.json({ status: ok ? "ready" : "not ready" }, ok ? 200 : 503);
  });

  app.get("/", (c) => {
    const t = plainWords(c);
    c.header("cache-control", "no-store");
    c.header("x-content-type-options", "nosniff");
    return c.text(
      [
        deps.config.name,
        "",
        `${t.mcpEndpoint}: ${deps.config.publicUrl}${MCP_PATH}`,
        `${t.descriptor}: ${deps.config.publicUrl}${DESCRIPTOR_PATH}`,
        ...(deps.mailbox === undefined
          ? []
          : [
              deps.mailboxPath === undefined
                ? `${t.mailbox}: ${deps.config.publicUrl}/dev/mailbox`
                : `${t.mailbox}: ${t.mailboxElsewhere}`,
            ]),
        "",
        t.intro,
        "",
      ].join("\n"),
    );
  });

  mountCheckPage(app, {
    holderName: deps.config.name,
    ...(deps.check === undefined ? {} : { options: deps.check }),
  });
  if (deps.services.push !== undefined) mountSubscriberEnd(app, deps.services.push);
  // The RFC 8058 one-click target of every mail about an intent.
  mountOneClickUnsubscribe(app, {
    consent: deps.services.consent,
    ...(deps.services.push === undefined ? {} : { push: deps.services.push }),
    holderName: deps.config.name,
    log: deps.log,
  });
  app.route(
    "/",
    personPages({
      consent: deps.services.consent,
      intents: deps.services.intents,
      matches: deps.services.matches,
      ...(deps.services.push === undefined ? {} : { push: deps.services.push }),
      ...(deps.assistants === undefined ? {} : { assistants: deps.assistants }),
      config: deps.config,
      ...(deps.mailbox === undefined ? {} : { mailbox: deps.mailbox }),
      ...(deps.mailboxPath === undefined ? {} : { mailboxPath: deps.mailboxPath }),
      ...(deps.limits === undefined ? {} : { limits: deps.limits }),
      log: deps.log,
    }),
  );

  app.notFound((c) => {
    c.header("cache-control", "no-store");
    return c.text(`${plainWords(c).notFound}\n`, 404);
  });
  app.onError((error, c) => {
    if (clientGone(c)) {
      // The client hung up (mid-body, say): its request failed, the holder did not.
      deps.log.debug({ event: "http.client_closed", error: error.name }, "the client closed the request");
      return new Response(null, { status: CLIENT_CLOSED_REQUEST });
    }
    if (isDatabaseBusy(error)) {
      // Not a fault: the database is saturated for a moment; the page works when asked again.
      deps.log.warn({ event: "http.busy" }, "the database was too busy to answer");
      c.header("retry-after", String(BUSY_RETRY_AFTER_SECONDS));
      return c.text(`${plainWords(c).busy}\n`, 503);
    }
    deps.log.error({ event: "http.failed", error: error.name }, error.message.slice(0, 300));
    return c.text(`${plainWords(c).failed}\n`, 500);
  });
  return app;
}
