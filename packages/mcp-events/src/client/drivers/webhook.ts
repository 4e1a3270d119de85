/**
 * Webhook mode (sketch, "Webhook-Based Delivery"): `events/subscribe` with this subscription's
 * callback URL, then a refresh loop that calls it again before `refreshBefore`, always with the
 * last persisted cursor (the server treats it as a no-op while live and as the replay point after
 * a lapse or a restart). A `secret` in any answer is adopted at once; the previous one keeps
 * verifying for a while, for deliveries signed before the change. `deliveryStatus` is handed to
 * the app. Deliveries arrive through the client's receiver; an error envelope ends the
 * subscription, CursorExpired restarts it from now, a gap envelope is reported and delivery goes on.
 * The dialect is the connection's (./dialect-choice.ts), read again at each subscribe.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { generateSecret } from "@doorbell/webhooks";
import type { Client } from "@modelcontextprotocol/client";
import type { EventsDialect } from "../../protocol/dialect.js";
import { EVENTS_METHODS } from "../../protocol/methods.js";
import type { DeliveryStatus, WebhookBody } from "../../protocol/model.js";
import { backoffMs } from "../backoff.js";
import type { DriverContext, WebhookSetup } from "../context.js";
import { EventsClientError } from "../errors.js";
import { linked } from "../signals.js";
import type { SubscriptionRecord } from "../store/store.js";
import type { WebhookRoute } from "../webhook/receiver.js";
import { call, fromErrorObject, fromRequestError, isFinal } from "../wire.js";
import { terminatedError } from "./push.js";

/** How long a replaced secret still verifies (deliveries in flight, retries signed before the change). */
export const PREVIOUS_SECRET_GRACE_MS = 10 * 60_000;
/** Refresh cadence when the server grants a subscription without expiry (SEP-3415 `refreshBefore: null`). */
const NO_EXPIRY_REFRESH_MS = 60 * 60_000;
export const CANCEL = "cancelled by the app";

export interface WebhookState {
  deliveryStatus: DeliveryStatus | undefined;
}

/** When to refresh: ahead of the deadline by a fifth of what is left, at least 1 s and at most 1 min. */
export function refreshDelayMs(remainingMs: number): number {
  const lead = Math.min(60_000, Math.max(1_000, remainingMs * 0.2));
  return Math.max(0, remainingMs - lead);
}

/** One webhook subscription's run, as its pieces share it. */
interface WebhookRun {
  readonly ctx: DriverContext;
  readonly state: WebhookState;
  readonly setup: WebhookSetup;
  /** A vault-provisioned whsec_ is the client's secret, whatever the dialect. */
  readonly provisioned: string | undefined;
  readonly hook: NonNullable<SubscriptionRecord["webhook"]>;
  /** The dialect follows the connection: the first one's, then each (re)subscribe's. */
  dialect: EventsDialect;
  unsaved: boolean;
  previous: { secret: string; until: number } | undefined;
  inFlight: { promise: Promise<void>; resolve: () => void } | undefined;
  terminal: EventsClientError | undefined;
  wake: AbortController;
  restartFromNow: boolean;
  /** Subscribes failed in a row, for the backoff. */
  failures: number;
}

export async function runWebhook(ctx: DriverContext, state: WebhookState): Promise<void> {
  const setup = ctx.webhook;
  if (!setup)
    throw new EventsClientError("ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE", "this client has no webhook config");
  const dialect = ctx.dialectOf(await ctx.connection.get());
  const unsaved = !ctx.record.webhook;
  ctx.record.webhook ??= { route: randomBytes(16).toString("base64url") };
  const run: WebhookRun = {
    ctx,
    state,
    setup,
    provisioned: setup.secret.startsWith("whsec_") ? setup.secret : undefined,
    hook: ctx.record.webhook,
    dialect,
    unsaved,
    previous: undefined,
    inFlight: undefined,
    terminal: undefined,
    wake: new AbortController(),
    restartFromNow: false,
    failures: 0,
  };
  await prepare(run);
  const url = `${setup.url.replace(/\/+$/, "")}/${run.hook.route}`;

  const unregister = setup.receiver.register(run.hook.route, routeOf(run));
  try {
    while (!ctx.signal.aborted) {
      if (run.terminal) throw run.terminal;
      if (run.restartFromNow) {
        run.restartFromNow = false;
        await ctx.restart("cursor-expired", null);
      }
      let client: Client | undefined;
      const pending = beginInFlight(run);
      try {
        client = await ctx.connection.get();
        const remaining = await subscribeOnce(run, client, url, pending);
        run.wake = new AbortController();
        await ctx.timers.sleep(
          Number.isFinite(remaining) ? refreshDelayMs(remaining) : 0,
          AbortSignal.any([ctx.signal, run.wake.signal]),
        );
      } catch (caught) {
        pending.resolve();
        if (ctx.signal.aborted) break;
        const error =
          caught instanceof EventsClientError
            ? caught
            : fromRequestError(run.dialect, EVENTS_METHODS.subscribe, caught);
        if (!ctx.isReady || isFinal(error)) throw error;
        run.failures += 1;
        if (error.code === "ERR_EVENTS_UNREACHABLE" && client) ctx.connection.failed(client);
        ctx.notice({
          type: "reconnecting",
          reason: error.code === "ERR_EVENTS_UNREACHABLE" ? "unreachable" : "server-error",
          attempt: run.failures,
        });
        run.wake = new AbortController();
        await ctx.timers.sleep(backoffMs(run.failures), AbortSignal.any([ctx.signal, run.wake.signal]));
      }
    }
    if (ctx.signal.reason === CANCEL) await unsubscribe(ctx, url);
  } finally {
    unregister();
  }
}

/** Whether this client makes the secret: provisioned, asked for, or required by SEP-3415. */
function clientSecret(run: WebhookRun): boolean {
  return run.provisioned !== undefined || run.setup.secret === "client" || run.dialect.name === "sep-3415";
}

/** Gives the record what the dialect now spoken needs before a subscribe, and persists it. */
async function prepare(run: WebhookRun): Promise<void> {
  const { hook } = run;
  if (run.dialect.name === "sketch" && hook.id === undefined) {
    // The sketch's id: ≥ 122 random bits, made once and kept (it is a bearer capability).
    hook.id = randomUUID();
    run.unsaved = true;
  }
  if (clientSecret(run) && hook.secret === undefined) {
    hook.secret = run.provisioned ?? generateSecret();
    run.unsaved = true;
  }
  // The vault's secret changed since this record was made: sign with the new one from now on.
  if (run.provisioned !== undefined && hook.secret !== run.provisioned) {
    hook.secret = run.provisioned;
    run.unsaved = true;
  }
  if (run.unsaved) await run.ctx.save();
  run.unsaved = false;
}

/** What the receiver asks of this subscription: its secrets, dialect and where bodies go. */
function routeOf(run: WebhookRun): WebhookRoute {
  const { ctx, hook } = run;
  return {
    get dialect() {
      return run.dialect;
    },
    secrets: () => {
      const now = ctx.timers.now();
      const list = hook.secret === undefined ? [] : [hook.secret];
      if (run.previous && run.previous.until > now) list.push(run.previous.secret);
      return list;
    },
    settled: () => run.inFlight?.promise ?? Promise.resolve(),
    awaitingServerSecret: () => run.inFlight !== undefined && !clientSecret(run),
    subscriptionId: () => hook.id,
    deliver: (body) => onBody(run, body),
  };
}

async function onBody(run: WebhookRun, body: WebhookBody): Promise<void> {
  const { ctx } = run;
  switch (body.type) {
    case "event":
      // The payload cursor is a safe watermark: persisting it is always safe, whatever the order.
      // An event without one (no replay) is delivered all the same and leaves the cursor as it was.
      await ctx.deliver([body.event], body.event.cursor);
      return;
    case "gap":
      await ctx.gap(body.cursor);
      return;
    case "error": {
      const error = fromErrorObject(run.dialect, body.error, "webhook delivery");
      if (error.code === "ERR_EVENTS_CURSOR_EXPIRED") {
        run.restartFromNow = true;
      } else {
        run.terminal = terminatedError(ctx.name, error);
      }
      run.wake.abort();
      return;
    }
    case "verification":
      return;
  }
}

/** Marks a subscribe as under way: deliveries wait for it to settle (the secret may change). */
function beginInFlight(run: WebhookRun): { promise: Promise<void>; resolve: () => void } {
  let settle = () => {};
  const pending = {
    promise: new Promise<void>((resolve) => {
      settle = resolve;
    }),
    resolve: () => {
      settle();
      if (run.inFlight === pending) run.inFlight = undefined;
    },
  };
  run.inFlight = pending;
  return pending;
}

/**
 * One `events/subscribe` (or refresh) on `client`: adopts what the answer says and returns how
 * long until the subscription must be refreshed.
 */
async function subscribeOnce(
  run: WebhookRun,
  client: Client,
  url: string,
  pending: { resolve: () => void },
): Promise<number> {
  const { ctx, hook, setup, state } = run;
  const spoken = ctx.dialectOf(client);
  run.dialect = spoken;
  await prepare(run);
  const params = spoken.subscribe.params.encode({
    ...(hook.id !== undefined && spoken.name === "sketch" ? { id: hook.id } : {}),
    name: ctx.name,
    params: ctx.params,
    cursor: ctx.record.cursor,
    url,
    ...(clientSecret(run) && hook.secret !== undefined ? { secret: hook.secret } : {}),
    ...(setup.ttlMs === undefined ? {} : { ttlMs: setup.ttlMs }),
  });
  const result = await linked(ctx.signal, (signal) =>
    call(client, spoken, EVENTS_METHODS.subscribe, params, spoken.subscribe.result.decode, {
      signal,
      timeout: ctx.timing.requestTimeoutMs,
    }),
  );
  run.failures = 0;
  if (result.secret !== undefined && result.secret !== hook.secret) {
    // Sketch: a secret appears when the server (re)created the subscription; adopt it.
    if (hook.secret !== undefined) {
      run.previous = { secret: hook.secret, until: ctx.timers.now() + PREVIOUS_SECRET_GRACE_MS };
    }
    hook.secret = result.secret;
    ctx.notice({ type: "secret-adopted", origin: "server" });
  }
  hook.id = result.id;
  await ctx.save();
  pending.resolve();
  if (result.truncated) await ctx.restart("truncated", result.cursor ?? null);
  else await ctx.setCursor(result.cursor);
  if (result.deliveryStatus) {
    state.deliveryStatus = result.deliveryStatus;
    ctx.notice({ type: "delivery-status", status: result.deliveryStatus });
  }
  if (hook.secret === undefined) {
    throw new EventsClientError(
      "ERR_EVENTS_PROTOCOL",
      "the server created the webhook subscription without giving its secret",
    );
  }
  ctx.ready();
  return result.refreshBefore === null
    ? NO_EXPIRY_REFRESH_MS
    : Date.parse(result.refreshBefore) - ctx.timers.now();
}

/** Eager cleanup; the TTL ends the subscription anyway, so a failure here is not the app's problem. */
async function unsubscribe(ctx: DriverContext, url: string): Promise<void> {
  const hook = ctx.record.webhook;
  try {
    const client = await ctx.connection.get();
    const dialect = ctx.dialectOf(client);
    const params = dialect.unsubscribe.params.encode({
      ...(hook?.id !== undefined ? { id: hook.id } : {}),
      url,
      name: ctx.name,
      params: ctx.params,
    });
    await call(client, dialect, EVENTS_METHODS.unsubscribe, params, dialect.unsubscribe.result.decode, {
      timeout: Math.min(ctx.timing.requestTimeoutMs, 10_000),
    });
  } catch {
    // Unreachable or already gone: the subscription lapses at its TTL.
  }
}
