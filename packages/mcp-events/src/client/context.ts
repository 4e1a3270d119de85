import type { EventsDialect } from "../protocol/dialect.js";
import type { EventOccurrence, JsonObject } from "../protocol/model.js";
import type { Connection } from "./connection.js";
import type { SubscriptionNotice } from "./notices.js";
import type { StreamRouter } from "./router.js";
import type { SubscriptionRecord } from "./store/store.js";
import type { Timers } from "./timers.js";
import type { EventsWebhookReceiver } from "./webhook/receiver.js";

export interface Timing {
  /** The least time between two polls, whatever the server says (sketch: configurable, default 1 s). */
  pollFloorMs: number;
  /** Silence on a push stream after which it is taken as dead (sketch: 2 × the 30 s heartbeat). */
  heartbeatWindowMs: number;
  /** How long a poll, subscribe or unsubscribe may take. */
  requestTimeoutMs: number;
  maxEvents: number | undefined;
}

export interface WebhookSetup {
  /** The public base URL; each subscription's callback is `<url>/<route>`. */
  url: string;
  receiver: EventsWebhookReceiver;
  /** Who makes the `whsec_` secret: the server (sketch default) or this client (SEP-3415 requires it). */
  secret: "server" | "client" | `whsec_${string}`;
  /** SEP-3415: the TTL to ask for. */
  ttlMs?: number;
}

/** What a delivery-mode driver (./drivers) gets from its subscription. */
export interface DriverContext {
  readonly name: string;
  readonly params: JsonObject;
  readonly dialect: EventsDialect;
  readonly connection: Connection;
  readonly router: StreamRouter;
  readonly timers: Timers;
  readonly timing: Timing;
  /** Aborted when the subscription is cancelled or the client closed. */
  readonly signal: AbortSignal;
  readonly record: SubscriptionRecord;
  readonly webhook: WebhookSetup | undefined;
  /** True once the driver called ready(). */
  readonly isReady: boolean;
  /** The first successful step: the subscribe() call resolves. */
  ready(): void;
  /** Hands new events to the app (each eventId once) and then persists the cursor after them. */
  deliver(events: readonly EventOccurrence[], cursorAfter?: string | null): Promise<void>;
  setCursor(cursor: string | null): Promise<void>;
  /** Events may have been missed; delivery goes on from `cursor` (null = from now). */
  gap(reason: "cursor-expired" | "truncated", cursor: string | null): Promise<void>;
  notice(notice: SubscriptionNotice): void;
  /** Persists the record (webhook id, route, secret). */
  save(): Promise<void>;
}
