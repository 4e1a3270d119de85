/**
 * The agent in one object: a holder client, the doorbell listener and a scheduler that reads each
 * watched intent when a doorbell rings — and, without doorbells (none offered, not yet approved,
 * ended, or one missed), every 15 minutes or at the holder's nextCheckAfter (push profile §8).
 *
 *     const agent = await DoorbellAgent.open({ holder: { url }, store, endpointUrl, onMatches });
 *     http.createServer(agent.listener.node).listen(8443);
 *     await agent.watch(intentCode);
 *     agent.start();
 */

import { randomBytes } from "node:crypto";
import type { PushEvent } from "@doorbell/intents";
import { type Clock, HOUR, MINUTE, systemClock } from "../clock.js";
import { AgentError, isAgentError } from "../errors.js";
import { checkCode, checkDeliveryUrl } from "../holder/arguments.js";
import { HolderClient, type HolderClientOptions } from "../holder/client.js";
import type { Doorbell } from "../listener/doorbell.js";
import { createDoorbellListener, type DoorbellListener } from "../listener/listener.js";
import { StateBox } from "../state/box.js";
import type { WatchState } from "../state/schema.js";
import { createMemoryStateStore, type StateStore } from "../state/store.js";
import type { AgentHooks, AgentTiming, WatchContext } from "./context.js";
import { FINAL_STATUSES, noteStatus, readMatches, readStatus } from "./reads.js";
import { handleOf, type IntentHandle, reportOf, type SubscriptionReport, usesDoorbells } from "./report.js";
import { ended, maintain, provedStatus, report, subscribe } from "./subscriptions.js";

export interface AgentOptions extends AgentHooks {
  /** A connected client, or how to connect one. */
  holder: HolderClient | HolderClientOptions;
  /** Default: in memory (a restart starts over); see createFileStateStore. */
  store?: StateStore;
  /**
   * The URL the holder should call, e.g. https://agent.example.com/doorbell; each subscription gets
   * <endpointUrl>/<random local id>. Without it the agent reads every 15 minutes, no doorbells.
   */
  endpointUrl?: string;
  /** Default: both event types. */
  events?: PushEvent[];
  clock?: Clock;
  timing?: Partial<AgentTiming>;
}

export const DEFAULT_TIMING: AgentTiming = {
  oldSecretGraceMs: 24 * HOUR,
  retryMs: 15 * MINUTE,
  resubscribeAfterMs: HOUR,
  safetyReadMs: 6 * HOUR,
  gapGraceMs: 30 * MINUTE,
};

/** subscription.ended reasons that say the intent itself ended, and its final status. */
const INTENT_END_REASONS: Readonly<Record<string, string>> = {
  "intent-withdrawn": "withdrawn",
  "intent-expired": "expired",
};

/** The scheduler sleeps at most this long, so a changed clock (suspend, NTP) is noticed. */
const MAX_SLEEP_MS = 60_000;

export class DoorbellAgent {
  readonly holder: HolderClient;
  readonly listener: DoorbellListener;
  readonly #ctx: WatchContext;
  readonly #box: StateBox;
  readonly #endpointUrl: string | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #closed = false;

  private constructor(holder: HolderClient, box: StateBox, options: AgentOptions) {
    const clock = options.clock ?? systemClock;
    this.holder = holder;
    this.#box = box;
    this.#endpointUrl = options.endpointUrl === undefined ? undefined : checkDeliveryUrl(options.endpointUrl);
    this.#ctx = {
      client: holder,
      box,
      clock,
      hooks: guardedHooks(options),
      events: options.events,
      timing: { ...DEFAULT_TIMING, ...options.timing },
    };
    this.listener = createDoorbellListener({
      box,
      clock,
      onDoorbell: (watch, doorbell) => this.#onDoorbell(watch, doorbell),
      onChallengeAnswered: (watch) => this.#onChallengeAnswered(watch),
    });
    for (const watch of Object.values(box.state.watches)) holder.restorePacing(watch.code, watch.pacing);
  }

  static async open(options: AgentOptions): Promise<DoorbellAgent> {
    const box = await StateBox.open(options.store ?? createMemoryStateStore());
    try {
      const holder =
        options.holder instanceof HolderClient
          ? options.holder
          : await HolderClient.connect({
              ...options.holder,
              ...(options.clock ? { clock: options.clock } : {}),
            });
      return new DoorbellAgent(holder, box, options);
    } catch (error) {
      await box.close();
      throw error;
    }
  }

  /**
   * Watches an intent: reads its status (a wrong code is refused here), asks for doorbells when an
   * endpoint is configured and the holder offers them, and reads its matches when allowed.
   * Watching the same code again returns the same handle (the state remembers it across restarts).
   */
  watch(code: string): Promise<IntentHandle> {
    const intentCode = checkCode(code);
    return this.#exclusive(async () => {
      let watch = Object.values(this.#box.state.watches).find((entry) => entry.code === intentCode);
      if (watch === undefined) {
        const intent = await this.holder.get(intentCode);
        watch = {
          handle: `w_${randomBytes(9).toString("base64url")}`,
          code: intentCode,
          intentId: intent.id,
        };
        this.#box.state.watches[watch.handle] = watch;
        await noteStatus(this.#ctx, watch, intent.status);
      }
      if (this.#endpointUrl !== undefined && watch.subscription === undefined) {
        if (this.holder.supportsPush) await subscribe(this.#ctx, watch, this.#endpointUrl);
        else
          await report(this.#ctx, watch, `the holder at ${this.holder.url.origin} does not offer doorbells`);
      } else {
        await report(this.#ctx, watch);
      }
      await this.#runDue();
      return handleOf(watch);
    });
  }

  /** Stops watching: ends the subscription at the holder (best effort) and forgets the intent. */
  unwatch(handle: string): Promise<void> {
    return this.#exclusive(async () => {
      const watch = this.#box.state.watches[handle];
      if (watch === undefined) return;
      const sub = watch.subscription;
      if (sub?.subscriptionId !== undefined && sub.status !== "ended") {
        try {
          await this.holder.unsubscribe(watch.code, sub.subscriptionId);
        } catch (error) {
          if (!isAgentError(error)) throw error;
          this.#ctx.hooks.onError?.(handleOf(watch), error);
        }
      }
      delete this.#box.state.watches[handle];
      await this.#box.commit();
    });
  }

  watches(): IntentHandle[] {
    return Object.values(this.#box.state.watches).map(handleOf);
  }

  report(handle: string): SubscriptionReport | undefined {
    const watch = this.#box.state.watches[handle];
    return watch === undefined ? undefined : reportOf(watch);
  }

  /** Does everything due now (reads, renewals, re-subscriptions); resolves with when the next is due (epoch ms). */
  runDue(): Promise<number> {
    return this.#exclusive(() => this.#runDue());
  }

  /** Runs `runDue` on timers until `close`. Tests call `runDue` with their own clock instead. */
  start(): void {
    this.#started = true;
    this.#schedule(0);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#tail.catch(() => {});
    await this.holder.close();
    await this.#box.close();
  }

  // -------------------------------------------------------------------------------------------

  async #runDue(): Promise<number> {
    let next = Number.POSITIVE_INFINITY;
    for (const watch of Object.values(this.#box.state.watches)) {
      next = Math.min(next, await maintain(this.#ctx, watch, this.#endpointUrl));
      next = Math.min(next, await this.#readIfDue(watch));
    }
    return next;
  }

  async #readIfDue(watch: WatchState): Promise<number> {
    const due = this.#readDueAt(watch);
    if (due > this.#ctx.clock()) return due;
    const granted = this.holder.pacing(watch.code)?.granted === true;
    try {
      if (!granted && !usesDoorbells(watch)) await readStatus(this.#ctx, watch);
      const found = await readMatches(this.#ctx, watch);
      this.#ctx.hooks.onRead?.(handleOf(watch), {
        at: this.#ctx.clock(),
        newMatches: found.length,
        nextReadAt: this.#readDueAt(watch),
      });
    } catch (error) {
      watch.pacing = this.holder.pacing(watch.code);
      await this.#box.commit();
      this.#ctx.hooks.onError?.(handleOf(watch), asAgentError(error));
    }
    return this.#readDueAt(watch);
  }

  #readDueAt(watch: WatchState): number {
    const allowed = this.holder.nextPullAt(watch.code);
    const pacing = this.holder.pacing(watch.code);
    if (pacing?.granted) return allowed;
    if (watch.intentStatus !== undefined && FINAL_STATUSES.has(watch.intentStatus))
      return Number.POSITIVE_INFINITY;
    if (usesDoorbells(watch) && pacing?.lastReadAt !== undefined) {
      return Math.max(allowed, pacing.lastReadAt + this.#ctx.timing.safetyReadMs);
    }
    return allowed;
  }

  /** Runs inside the receiver, before the holder gets its 2xx: record, make durable, return; the read runs after. */
  async #onDoorbell(watch: WatchState, doorbell: Doorbell): Promise<void> {
    const sub = watch.subscription;
    if (sub === undefined) return;
    const rangAt = this.#ctx.clock();
    sub.lastDoorbellAt = rangAt;
    // A doorbell comes only after the challenge and the person's approval; it also ends a gap.
    const wasTrusted = usesDoorbells(watch);
    if (doorbell.type !== "subscription.ended" && sub.status !== "ended") sub.status = "active";
    delete watch.gapAt;
    /** Noted after the doorbell is told, so the app hears "rang", then the status. */
    let newStatus: string | undefined;
    switch (doorbell.type) {
      case "intent.matches.delivered": {
        const latest = doorbell.data.latestDeliveredAt;
        if (watch.announcedUpTo === undefined || Date.parse(latest) > Date.parse(watch.announcedUpTo)) {
          watch.announcedUpTo = latest;
        }
        this.holder.grantRead(watch.code);
        watch.pacing = this.holder.pacing(watch.code);
        break;
      }
      case "intent.status.changed":
        // A final status gets one last read, for matches delivered just before it.
        if (FINAL_STATUSES.has(doorbell.data.status)) {
          this.holder.grantRead(watch.code);
          watch.pacing = this.holder.pacing(watch.code);
        }
        newStatus = doorbell.data.status;
        break;
      case "subscription.ended": {
        await ended(this.#ctx, watch, doorbell.data.reason);
        // The doorbells ended because the intent did (push profile §4.2): its status is final, as
        // an intent.status.changed would have said; one last read takes matches just before it.
        newStatus = INTENT_END_REASONS[doorbell.data.reason];
        if (newStatus !== undefined) {
          this.holder.grantRead(watch.code);
          watch.pacing = this.holder.pacing(watch.code);
        }
        break;
      }
      case "subscription.verification":
        break;
    }
    await this.#box.commit();
    if (!wasTrusted && usesDoorbells(watch)) await report(this.#ctx, watch);
    const detail =
      doorbell.type === "intent.status.changed"
        ? doorbell.data.status
        : doorbell.type === "subscription.ended"
          ? doorbell.data.reason
          : undefined;
    this.#ctx.hooks.onDoorbell?.(handleOf(watch), {
      type: doorbell.type,
      at: rangAt,
      ...(detail === undefined ? {} : { detail }),
      nextReadAt: this.#readDueAt(watch),
    });
    if (newStatus !== undefined) await noteStatus(this.#ctx, watch, newStatus);
    this.#kick();
  }

  /**
   * The holder has no tool to read a subscription's status, but its challenge comes right after
   * awaiting_verification: once proved, it waits for the person (or, when no approval is needed, is active).
   */
  async #onChallengeAnswered(watch: WatchState): Promise<void> {
    const sub = watch.subscription;
    if (sub?.status === "subscribing") {
      // The holder proved the endpoint before its answer arrived: `apply` takes it from here.
      sub.provedEarly = true;
      await this.#box.commit();
      return;
    }
    if (sub?.status !== "awaiting_verification") return;
    sub.status = provedStatus(sub);
    await this.#box.commit();
    await report(this.#ctx, watch);
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new AgentError("ERR_AGENT_CLOSED", "this agent is closed"));
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => {});
    return result;
  }

  #schedule(delayMs: number): void {
    if (!this.#started || this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, Math.min(delayMs, MAX_SLEEP_MS)));
  }

  #tick(): void {
    this.runDue().then(
      (next) => this.#schedule(next - this.#ctx.clock()),
      () => this.#schedule(MAX_SLEEP_MS),
    );
  }

  #kick(): void {
    this.#schedule(0);
  }
}

function asAgentError(error: unknown): AgentError {
  if (isAgentError(error)) return error;
  return new AgentError(
    "ERR_AGENT_HANDLER_FAILED",
    `the app's hook failed (${error instanceof Error ? error.message.slice(0, 200) : "not an Error"}); matches it did not take are handed over again at the next read`,
  );
}

/** Status and subscription news go to the app without holding up a doorbell's answer; a failing hook is reported, not fatal. */
function guardedHooks(hooks: AgentHooks): AgentHooks {
  const later =
    <A extends unknown[]>(hook: ((...args: A) => void | Promise<void>) | undefined) =>
    (...args: A): void => {
      if (hook === undefined) return;
      void Promise.resolve()
        .then(() => hook(...args))
        .catch((error: unknown) => {
          const intent = args[0] as IntentHandle;
          hooks.onError?.(intent, asAgentError(error));
        });
    };
  return {
    onStatus: later(hooks.onStatus),
    onSubscription: later(hooks.onSubscription),
    onDoorbell: later(hooks.onDoorbell),
    onRead: later(hooks.onRead),
    ...(hooks.onMatches === undefined ? {} : { onMatches: hooks.onMatches }),
    ...(hooks.onError === undefined ? {} : { onError: hooks.onError }),
  };
}
