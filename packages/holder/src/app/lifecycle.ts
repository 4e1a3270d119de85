/**
 * A running holder's life after start-up: listening where it may (the local mailbox and open
 * metrics never beyond loopback), the graceful drain on close, and the clean-up of a start that
 * failed half-way.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Worker } from "@doorbell/delivery";
import { isLoopbackHost, type nodeServers } from "@doorbell/mcp-endpoint";
import type { Database } from "@doorbell/store";
import { closeSearch } from "../catalogue/search.js";
import type { Background } from "../cluster/background.js";
import type { ChangeBus } from "../cluster/change-bus.js";
import type { IntentFeed } from "../cluster/intent-feed.js";
import type { HolderEvents } from "../events/index.js";
import type { HolderLimits } from "../limits/index.js";
import type { SmtpMailer } from "../mail/smtp.js";
import type { HolderMcpEndpoint } from "../mcp/handler.js";
import type { HolderTables } from "../model/tables.js";
import { type MetricsOptions, metricsExposureProblem } from "../observability/metrics-route.js";
import { type OperatorPageOptions, operatorExposureProblem } from "../operator/operator-access.js";

/** How long requests in flight get before long-lived streams are ended. */
const STREAM_GRACE_MS = 1_000;

/** What a holder started, each part once it exists. */
export interface StartedParts {
  store: Database<HolderTables>;
  mcp?: HolderMcpEndpoint | undefined;
  events?: HolderEvents | undefined;
  worker?: Worker | undefined;
  background?: Background | undefined;
  feed?: IntentFeed | undefined;
  bus?: ChangeBus | undefined;
  smtp?: SmtpMailer | undefined;
  limits?: HolderLimits | undefined;
}

type Servers = ReturnType<typeof nodeServers>;

/** What `listen` checks before it serves: the mailbox page, open metrics and an open operator page. */
export interface ListenGuard {
  localMailbox: boolean;
  metrics: MetricsOptions | undefined;
  operatorPage?: OperatorPageOptions | undefined;
  publicUrl: string;
}

/** Serves on a port, refusing an address the mailbox page, open metrics or an open operator page must not be reached at. */
export async function listenGuarded(
  servers: Servers,
  port: number,
  host: string,
  guard: ListenGuard,
): Promise<{ port: number; host: string; url: string }> {
  if (guard.localMailbox && !isLoopbackHost(host)) {
    // The local mailbox page shows every confirm and manage link: never serve it beyond this machine.
    throw new Error(
      `no SMTP server is configured, so mail goes to the local mailbox page; listen on a loopback address (not ${host}) or configure --smtp`,
    );
  }
  const exposed = metricsExposureProblem(guard.metrics, host, guard.publicUrl, isLoopbackHost);
  if (exposed !== undefined) throw new Error(exposed);
  const operatorExposed = operatorExposureProblem(guard.operatorPage, host, guard.publicUrl, isLoopbackHost);
  if (operatorExposed !== undefined) throw new Error(operatorExposed);
  return servers.listen(port, host);
}

/**
 * Graceful drain: stop accepting, let requests in flight finish (a second, then long-lived
 * streams are ended), then the deliveries in hand, then give up leases and close the database.
 */
export async function drainAndClose(
  servers: Servers,
  parts: StartedParts & { mcp: HolderMcpEndpoint },
): Promise<void> {
  const stopped = servers.close();
  await Promise.race([stopped, delay(STREAM_GRACE_MS)]);
  await parts.mcp.close();
  await parts.events?.close();
  await stopped;
  await parts.worker?.stop();
  await parts.background?.stop();
  await parts.feed?.stop();
  await parts.bus?.stop();
  parts.smtp?.close();
  await parts.limits?.close();
  await closeSearch(parts.store);
  await parts.store.close();
}

/** After a start that failed half-way: stops whatever had started, then closes the database. */
export async function closeAfterFailedStart(parts: StartedParts): Promise<void> {
  await parts.worker?.stop();
  await parts.background?.stop();
  await parts.feed?.stop();
  await parts.bus?.stop();
  await parts.mcp?.close();
  await parts.events?.close();
  parts.smtp?.close();
  await parts.limits?.close();
  await parts.store.close();
}

/**
 * `listen` and `close` of a started holder: listening on loopback also allows loopback Host names,
 * and close is done once however often it is called.
 */
export function holderLifecycle(
  servers: Servers,
  parts: StartedParts & { mcp: HolderMcpEndpoint },
  guard: ListenGuard,
  state: { onLoopback: boolean; draining: boolean },
): {
  listen(port?: number, host?: string): Promise<{ port: number; host: string; url: string }>;
  close(): Promise<void>;
} {
  let closing: Promise<void> | undefined;
  return {
    async listen(port = 8080, host = "127.0.0.1") {
      const address = await listenGuarded(servers, port, host, guard);
      if (isLoopbackHost(address.host)) state.onLoopback = true;
      return address;
    },
    close() {
      closing ??= (async () => {
        // /readyz answers 503 from here on (drainAndClose drains in order).
        state.draining = true;
        await drainAndClose(servers, parts);
      })();
      return closing;
    },
  };
}
