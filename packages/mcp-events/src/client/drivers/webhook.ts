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
import { EVENTS_METHODS } from "../../protocol/methods.js";
import type { DeliveryStatus, WebhookBody } from "../../protocol/model.js";
import { backoffMs } from "../backoff.js";
import type { DriverContext } from "../context.js";
import { EventsClientError } from "../errors.js";
import { linked } from "../signals.js";
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

export async function runWebhook(ctx: DriverContext, state: WebhookState): Promise<void> {
  const setup = ctx.webhook;
  if (!setup)
    throw new EventsClientError("ERR_EVENTS_DELIVERY_MODE_UNAVAILABLE", "this client has no webhook config");
  // The dialect follows the connection: the first one's, then each (re)subscribe's.
  let dialect = ctx.dialectOf(await ctx.connection.get());
  // A vault-provisioned whsec_ is the client's secret, whatever the dialect.
  const provisioned = setup.secret.startsWith("whsec_") ? setup.secret : undefined;
  const clientSecret = () =>
    provisioned !== undefined || setup.secret === "client" || dialect.name === "sep-3415";
  const fresh = () => provisioned ?? generateSecret();
  let unsaved = !ctx.record.webhook;
  ctx.record.webhook ??= { route: randomBytes(16).toString("base64url") };
  const hook = ctx.record.webhook;
  /** Gives the record what the dialect now spoken needs before a subscribe, and persists it. */
  const prepare = async () => {
    if (dialect.name === "sketch" && hook.id === undefined) {
      // The sketch's id: ≥ 122 random bits, made once and kept (it is a bearer capability).
      hook.id = randomUUID();
      unsaved = true;
    }
    if (clientSecret() && hook.secret === undefined) {
      hook.secret = fresh();
      unsaved = true;
    }
    // The vault's secret changed since this record was made: sign with the new one from now on.
    if (provisioned !== undefined && hook.secret !== provisioned) {
      hook.secret = provisioned;
      unsaved = true;
    }
    if (unsaved) await ctx.save();
    unsaved = false;
  };
  await prepare();
  const url = `${setup.url.replace(/\/+$/, "")}/${hook.route}`;

  let previous: { secret: string; until: number } | undefined;
  let inFlight: { promise: Promise<void>; resolve: () => void } | undefined;
  let terminal: EventsClientError | undefined;
  let wake = new AbortController();
  let restartFromNow = false;

  const route: WebhookRoute = {
    get dialect() {
      return dialect;
    },
    secrets: () => {
      const now = ctx.timers.now();
      const list = hook.secret === undefined ? [] : [hook.secret];
      if (previous && previous.until > now) list.push(previous.secret);
      return list;
    },
    settled: () => inFlight?.promise ?? Promise.resolve(),
    awaitingServerSecret: () => inFlight !== undefined && !clientSecret(),
    subscriptionId: () => hook.id,
    deliver: (body) => onBody(body),
  };

  async function onBody(body: WebhookBody): Promise<void> {
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
        const error = fromErrorObject(dialect, body.error, "webhook delivery");
        if (error.code === "ERR_EVENTS_CURSOR_EXPIRED") {
          restartFromNow = true;
        } else {
          terminal = terminatedError(ctx.name, error);
        }
        wake.abort();
        return;
      }
      case "verification":
        return;
    }
  }

  const unregister = setup.receiver.register(hook.route, route);
  let failures = 0;
  try {
    while (!ctx.signal.aborted) {
      if (terminal) throw terminal;
      if (restartFromNow) {
        restartFromNow = false;
        await ctx.restart("cursor-expired", null);
      }
      let client: Client | undefined;
      let settle = () => {};
      const pending = {
        promise: new Promise<void>((resolve) => {
          settle = resolve;
        }),
        resolve: () => {
          settle();
          if (inFlight === pending) inFlight = undefined;
        },
      };
      inFlight = pending;
      try {
        client = await ctx.connection.get();
        const active = client;
        const spoken = ctx.dialectOf(active);
        dialect = spoken;
        await prepare();
        const params = spoken.subscribe.params.encode({
          ...(hook.id !== undefined && spoken.name === "sketch" ? { id: hook.id } : {}),
          name: ctx.name,
          params: ctx.params,
          cursor: ctx.record.cursor,
          url,
          ...(clientSecret() && hook.secret !== undefined ? { secret: hook.secret } : {}),
          ...(setup.ttlMs === undefined ? {} : { ttlMs: setup.ttlMs }),
        });
        const result = await linked(ctx.signal, (signal) =>
          call(active, spoken, EVENTS_METHODS.subscribe, params, spoken.subscribe.result.decode, {
            signal,
            timeout: ctx.timing.requestTimeoutMs,
          }),
        );
        failures = 0;
        if (result.secret !== undefined && result.secret !== hook.secret) {
          // Sketch: a secret appears when the server (re)created the subscription; adopt it.
          if (hook.secret !== undefined) {
            previous = { secret: hook.secret, until: ctx.timers.now() + PREVIOUS_SECRET_GRACE_MS };
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
        const remaining =
          result.refreshBefore === null
            ? NO_EXPIRY_REFRESH_MS
            : Date.parse(result.refreshBefore) - ctx.timers.now();
        wake = new AbortController();
        await ctx.timers.sleep(
          Number.isFinite(remaining) ? refreshDelayMs(remaining) : 0,
          AbortSignal.any([ctx.signal, wake.signal]),
        );
      } catch (caught) {
        pending.resolve();
        if (ctx.signal.aborted) break;
        const error =
          caught instanceof EventsClientError
            ? caught
            : fromRequestError(dialect, EVENTS_METHODS.subscribe, caught);
        if (!ctx.isReady || isFinal(error)) throw error;
        failures += 1;
        if (error.code === "ERR_EVENTS_UNREACHABLE" && client) ctx.connection.failed(client);
        ctx.notice({
          type: "reconnecting",
          reason: error.code === "ERR_EVENTS_UNREACHABLE" ? "unreachable" : "server-error",
          attempt: failures,
        });
        wake = new AbortController();
        await ctx.timers.sleep(backoffMs(failures), AbortSignal.any([ctx.signal, wake.signal]));
      }
    }
    if (ctx.signal.reason === CANCEL) await unsubscribe(ctx, url);
  } finally {
    unregister();
  }
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
