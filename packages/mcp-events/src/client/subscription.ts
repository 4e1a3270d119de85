/**
 * One logical subscription: its record (cursor, webhook id and secret) in the store, the eventIds
 * already handed over, the queue behind its async iterator, and the driver of its delivery mode.
 */
import { randomUUID } from "node:crypto";
import type { DeliveryMode, DeliveryStatus, EventOccurrence, JsonObject } from "../protocol/model.js";
import type { Connection } from "./connection.js";
import type { DriverContext, Timing, WebhookSetup } from "./context.js";
import { EventIdWindow } from "./dedup.js";
import type { DialectChoice } from "./dialect-choice.js";
import { runPoll } from "./drivers/poll.js";
import { runPush, terminatedError } from "./drivers/push.js";
import { CANCEL, runWebhook, type WebhookState } from "./drivers/webhook.js";
import { EventsClientError } from "./errors.js";
import type { SubscriptionNotice } from "./notices.js";
import { AsyncQueue } from "./queue.js";
import type { StreamRouter } from "./router.js";
import type { CursorStore, SubscriptionRecord } from "./store/store.js";
import type { Timers } from "./timers.js";

/** How many eventIds are remembered per subscription (in memory) and across restarts (in the store). */
const DEDUP_WINDOW = 10_000;
const PERSISTED_EVENT_IDS = 256;

export interface EventsSubscription extends AsyncIterable<EventOccurrence> {
  readonly name: string;
  readonly params: JsonObject;
  /** The delivery mode in use. */
  readonly mode: DeliveryMode;
  /** The last real cursor persisted for this subscription (null: none yet, or the last one expired). */
  readonly cursor: string | null;
  /** Webhook mode: the server's last `deliveryStatus`, if it sent one. */
  readonly deliveryStatus: DeliveryStatus | undefined;
  /** Stops delivery, unsubscribes a webhook and forgets the stored cursor. The iterator ends. */
  cancel(): Promise<void>;
}

export interface SubscriptionDeps {
  key: string;
  name: string;
  params: JsonObject;
  dialects: DialectChoice;
  connection: Connection;
  router: StreamRouter;
  store: CursorStore;
  record: SubscriptionRecord;
  timers: Timers;
  timing: Timing;
  webhook: WebhookSetup | undefined;
  onNotice: ((notice: SubscriptionNotice) => void) | undefined;
  onEnd: () => void;
}

/** Errors on the way in that another mode may not have: fall back to the next candidate. */
const FALLBACK: ReadonlySet<string> = new Set([
  "ERR_EVENTS_DELIVERY_MODE_UNSUPPORTED",
  "ERR_EVENTS_INVALID_CALLBACK_URL",
]);

export class Subscription implements EventsSubscription {
  readonly name: string;
  readonly params: JsonObject;
  #mode: DeliveryMode = "poll";
  readonly #deps: SubscriptionDeps;
  readonly #queue = new AsyncQueue<EventOccurrence>();
  readonly #seen: EventIdWindow;
  readonly #controller = new AbortController();
  readonly #webhookState: WebhookState = { deliveryStatus: undefined };
  #running: Promise<void> = Promise.resolve();

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
    this.name = deps.name;
    this.params = deps.params;
    this.#seen = new EventIdWindow(DEDUP_WINDOW, deps.record.recentEventIds ?? []);
  }

  get mode(): DeliveryMode {
    return this.#mode;
  }

  get cursor(): string | null {
    return this.#deps.record.cursor;
  }

  get deliveryStatus(): DeliveryStatus | undefined {
    return this.#webhookState.deliveryStatus;
  }

  /** Tries each candidate mode until one delivers its first answer. */
  async start(candidates: readonly DeliveryMode[]): Promise<void> {
    let fallbackFrom: { mode: DeliveryMode; reason: EventsClientError["code"] } | undefined;
    for (const [index, mode] of candidates.entries()) {
      this.#mode = mode;
      let markReady = () => {};
      const ready = new Promise<"ready">((resolve) => {
        markReady = () => resolve("ready");
      });
      const run = this.#drive(mode, this.#context(markReady));
      const first = await Promise.race([
        ready,
        run.then(
          () => ({
            error: new EventsClientError("ERR_EVENTS_CLOSED", "the subscription was closed while starting"),
          }),
          (error: unknown) => ({ error: error as EventsClientError }),
        ),
      ]);
      if (first === "ready") {
        this.#notice({
          type: "mode",
          mode,
          ...(fallbackFrom ? { fallbackFrom: fallbackFrom.mode, reason: fallbackFrom.reason } : {}),
        });
        this.#running = run.then(
          () => this.#finish(),
          (error: unknown) => this.#finish(this.#asTerminated(error)),
        );
        return;
      }
      const error = first.error;
      if (
        !(error instanceof EventsClientError) ||
        !FALLBACK.has(error.code) ||
        index === candidates.length - 1
      ) {
        this.#controller.abort();
        this.#deps.onEnd();
        throw error;
      }
      fallbackFrom = { mode, reason: error.code };
    }
  }

  async cancel(): Promise<void> {
    if (!this.#controller.signal.aborted) this.#controller.abort(CANCEL);
    await this.#running;
    await this.#deps.store.delete(this.#deps.key).catch(() => {});
  }

  /** Stops delivery but keeps the record, so the next run resumes from the cursor. */
  async close(): Promise<void> {
    if (!this.#controller.signal.aborted) this.#controller.abort("closed");
    await this.#running;
  }

  [Symbol.asyncIterator](): AsyncIterator<EventOccurrence> {
    return {
      next: () => this.#queue.next(),
      return: async () => {
        await this.cancel();
        return { value: undefined, done: true };
      },
    };
  }

  #drive(mode: DeliveryMode, ctx: DriverContext): Promise<void> {
    switch (mode) {
      case "poll":
        return runPoll(ctx, randomUUID());
      case "push":
        return runPush(ctx);
      case "webhook":
        return runWebhook(ctx, this.#webhookState);
    }
  }

  #finish(error?: EventsClientError): void {
    this.#queue.end(error);
    this.#deps.onEnd();
  }

  #asTerminated(error: unknown): EventsClientError {
    if (error instanceof EventsClientError) {
      if (error.code === "ERR_EVENTS_TERMINATED" || error.code === "ERR_EVENTS_STATE") return error;
      return terminatedError(this.name, error);
    }
    return new EventsClientError(
      "ERR_EVENTS_TERMINATED",
      `the subscription to ${this.name} failed`,
      {},
      error,
    );
  }

  #notice(notice: SubscriptionNotice): void {
    try {
      this.#deps.onNotice?.(notice);
    } catch {
      // The app's notice hook must not stop delivery.
    }
  }

  #context(markReady: () => void): DriverContext {
    const deps = this.#deps;
    const record = deps.record;
    let isReady = false;
    const save = async () => {
      record.recentEventIds = this.#seen.recent(PERSISTED_EVENT_IDS);
      await deps.store.set(deps.key, record);
    };
    return {
      name: deps.name,
      params: deps.params,
      dialectOf: (client) => deps.dialects.for(client),
      connection: deps.connection,
      router: deps.router,
      timers: deps.timers,
      timing: deps.timing,
      signal: this.#controller.signal,
      record,
      webhook: deps.webhook,
      get isReady() {
        return isReady;
      },
      ready: () => {
        if (isReady) return;
        isReady = true;
        markReady();
      },
      deliver: async (events, cursorAfter) => {
        let fresh = false;
        for (const event of events) {
          if (!this.#seen.add(event.eventId)) continue;
          fresh = true;
          this.#queue.push(event);
        }
        const moved = typeof cursorAfter === "string" && cursorAfter !== record.cursor;
        if (moved) record.cursor = cursorAfter;
        if (moved || fresh) await save();
      },
      setCursor: async (cursor) => {
        if (typeof cursor !== "string" || cursor === record.cursor) return;
        record.cursor = cursor;
        await save();
      },
      gap: async (cursor) => {
        this.#notice({ type: "gap", reason: "truncated" });
        if (typeof cursor === "string") record.cursor = cursor;
        await save();
      },
      restart: async (reason, cursor) => {
        this.#notice({ type: "gap", reason });
        record.cursor = cursor;
        await save();
      },
      notice: (notice) => this.#notice(notice),
      save,
    };
  }
}
