/**
 * A whole holder in one call: store (a SQLite file under the data directory by default, or a
 * PostgreSQL URL), migrations, seal keys, the context, the services wired together, the matching
 * index, the expiry timer, the MCP endpoint and the pages — `{ fetch, listen, close }`.
 *
 * createHolder reads as the list of its steps; each step is a module of app/. The wiring
 * (createHolderServices, app/services.ts) is the one place the services meet.
 */
import { startChangeBus } from "../cluster/change-bus.js";
import { startIntentFeed } from "../cluster/intent-feed.js";
import { createIntentChangeFeed } from "../events/index.js";
import { createAccessLogger } from "../observability/access-log.js";
import { createHolderMetrics } from "../observability/metrics.js";
import type { PushService } from "../push/service.js";
import { startHolderBackground } from "./background.js";
import { holderContext, holderHosts, holderLimits, holderSealer } from "./context.js";
import { holderDelivery } from "./delivery.js";
import { importDemoCatalogueOnce } from "./demo.js";
import { openHolderEvents } from "./events.js";
import { holderHttp, holderNodeServers } from "./http.js";
import { closeAfterFailedStart, holderLifecycle, type StartedParts } from "./lifecycle.js";
import { openHolderMail } from "./mail.js";
import { createHolderMcp } from "./mcp.js";
import { openHolderOAuth } from "./oauth.js";
import { migrateHolderStore, openHolderStore } from "./open.js";
import { configureHolderOperatorWebhook } from "./operator-webhook.js";
import { type CreateHolderOptions, type Holder, resolveHolderSettings } from "./options.js";
import { createHolderServices } from "./services.js";
import { holderSummary } from "./summary.js";

export { importDemoCatalogueOnce } from "./demo.js";
export { holderEgressPolicy } from "./egress.js";
export type { HolderSummary } from "./options.js";
export { type CreateHolderOptions, DEFAULT_LANGUAGES, type Holder } from "./options.js";

export async function createHolder(options: CreateHolderOptions = {}): Promise<Holder> {
  const settings = resolveHolderSettings(options);
  const { clock, log, config, publicUrl } = settings;
  const opened = await openHolderStore(options, settings.dataDir);
  // Each part once it runs, so that a start failing half-way stops what had started.
  const parts: StartedParts = { store: opened.store };
  const state = { onLoopback: false, draining: false };
  try {
    await migrateHolderStore(opened);
    const sealer = holderSealer(opened);
    const metrics = createHolderMetrics();
    const mail = openHolderMail({ ...options, config, store: opened.store, sealer, clock });
    parts.smtp = mail.smtp;
    const context = holderContext(opened, sealer, metrics.countMail(mail.mailer), settings);
    const limits = holderLimits(opened, options, settings);
    parts.limits = limits;
    const hosts = holderHosts(options, settings, state);
    const delivery = holderDelivery(opened, sealer, hosts.egress(), metrics, settings, options.delivery);

    // What changed, told to this process's listeners (MCP Events) and to every other process.
    const changes = createIntentChangeFeed();
    const bus = await startChangeBus({
      store: opened.handle,
      log,
      listeners: { intents: changes, resync: () => parts.events?.resync() },
    });
    parts.bus = bus;
    const oauth = await openHolderOAuth(options, context, hosts, limits);
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
    // The index follows intents activated, changed and ended in other processes.
    parts.feed = await startIntentFeed({ store: opened.handle, matching: services.matching, log });
    const events = await openHolderEvents(options, { opened, services, sealer, delivery, hosts, settings });
    parts.events = events;
    if (events !== undefined) changes.listen(events);

    const mcp = createHolderMcp(services, {
      ...(options.mcp === undefined ? {} : { mcp: options.mcp }),
      publicUrl,
      clock,
      log,
      metrics,
      limits,
      ...(events === undefined ? {} : { events }),
      ...(oauth === undefined ? {} : { oauth }),
    });
    parts.mcp = mcp;
    metrics.watchAdmission(mcp.admission);
    metrics.watchConnections(opened.handle);
    const accessLog = createAccessLogger(log, metrics);
    const app = holderHttp(options, {
      opened,
      settings,
      services,
      push,
      mcp,
      mail,
      hosts,
      limits,
      oauth,
      metrics,
      accessLog,
      delivery,
      draining: () => state.draining,
    });
    // A process that only imports leaves the operator's webhook as the serving ones configured it.
    const operatorWebhook =
      options.background === false
        ? undefined
        : await configureHolderOperatorWebhook(delivery, options.delivery, settings.dataDir);
    // Expiry, the push sweep, digests and purges run in one process across all of them.
    if (options.background !== false) {
      await startHolderBackground(options, { opened, settings, services, push, oauth, delivery }, parts);
    }

    const servers = holderNodeServers(app.fetch, {
      oauth,
      accessLog: options.accessLog === false ? undefined : accessLog,
      mcp,
      hosts,
      limits,
      metrics,
    });
    const guard = {
      localMailbox: mail.mailbox !== undefined,
      metrics: options.metrics,
      operatorPage: options.operatorPage,
      publicUrl,
    };
    return {
      fetch: (request) => Promise.resolve(app.fetch(request)),
      ...holderLifecycle(servers, { ...parts, mcp }, guard, state),
      context,
      services,
      delivery,
      events,
      mcp,
      summary: {
        ...holderSummary(options, settings, opened, mail, { demo, activeIntents }),
        ...(operatorWebhook === undefined ? {} : { operatorWebhook }),
      },
      limits,
      metrics,
    };
  } catch (error) {
    await closeAfterFailedStart(parts);
    throw error;
  }
}
