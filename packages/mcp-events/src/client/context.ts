import type { Client } from "@modelcontextprotocol/client";
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
  /** The dialect to speak on `client`: the app's, else the one its era implies. */
  dialectOf(client: Client): EventsDialect;
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
  /*
   * Cursors: a null (or absent) cursor from the server only says "no replay position here" (event
   * types without replay); it never replaces the last real cursor. Only `restart` forgets it.
   */
  /** Hands new events to the app (each eventId once), then persists `cursorAfter` if it is a real cursor. */
  deliver(events: readonly EventOccurrence[], cursorAfter?: string | null): Promise<void>;
  /** Persists a real cursor; null keeps the last real one. */
  setCursor(cursor: string | null | undefined): Promise<void>;
  /**
   * A gap the server announced on its own (a webhook gap envelope): events may have been lost.
   * A real `cursor` is where delivery goes on; null keeps the last real one, from which the next
   * refresh may still replay what was lost.
   */
  gap(cursor: string | null): Promise<void>;
  /**
   * The server could not honour the cursor this client sent (CursorExpired, or `truncated`): a
   * gap, and delivery goes on from `cursor`; null means from now, so the void cursor is forgotten
   * rather than sent again (which would only bring the same answer).
   */
  restart(reason: "cursor-expired" | "truncated", cursor: string | null): Promise<void>;
  notice(notice: SubscriptionNotice): void;
  /** Persists the record (webhook id, route, secret). */
  save(): Promise<void>;
}
