/**
 * The life of one doorbell subscription (push profile §4, §6 rules 2, 3, 7): subscribe with a url
 * chosen before the holder names the subscription, renew before refreshBefore with a new secret
 * (the old one keeps verifying for a while), and after an end fall back to reading (§8.4).
 */
import { randomBytes } from "node:crypto";
import { generateSecret } from "@doorbell/webhooks";
import { AgentError, isAgentError } from "../errors.js";
import type { PushSubscription } from "../holder/results.js";
import type { LocalSubscription, WatchState } from "../state/schema.js";
import type { WatchContext } from "./context.js";
import { handleOf, reportOf } from "./report.js";

/** Ends after which subscribing again with the same url needs no new approval (§6 rule 3: the approval holds for the url). */
const RESUBSCRIBE_REASONS = new Set(["delivery-failed", "lease-expired"]);
/** Refusals that may pass: the holder was away or busy. */
const TRANSIENT = new Set(["ERR_AGENT_UNREACHABLE", "ERR_AGENT_RATE_LIMITED"]);

export function endpointFor(baseUrl: string, localId: string): string {
  const base = new URL(baseUrl);
  base.pathname = `${base.pathname.replace(/\/+$/, "")}/${localId}`;
  return base.href;
}

/** Starts a subscription for `watch` at `baseUrl`/<random local id>. Failures are reported, never thrown. */
export async function subscribe(ctx: WatchContext, watch: WatchState, baseUrl: string): Promise<void> {
  const localId = `d_${randomBytes(16).toString("base64url")}`;
  watch.subscription = {
    localId,
    url: endpointFor(baseUrl, localId),
    status: "subscribing",
    secrets: [{ secret: generateSecret() }],
  };
  await callSubscribe(ctx, watch, watch.subscription);
}

/** Renewal and re-subscription: the same url, a new secret; the previous secret stays valid for a grace time. */
export async function resubscribe(ctx: WatchContext, watch: WatchState): Promise<void> {
  const sub = watch.subscription;
  if (sub === undefined) return;
  const now = ctx.clock();
  sub.secrets = [
    { secret: generateSecret() },
    ...sub.secrets
      .map((entry) =>
        entry.until === undefined ? { ...entry, until: now + ctx.timing.oldSecretGraceMs } : entry,
      )
      .filter((entry) => (entry.until ?? Number.POSITIVE_INFINITY) > now),
  ];
  if (sub.status === "ended") {
    sub.status = "subscribing";
    delete sub.endedReason;
  }
  await callSubscribe(ctx, watch, sub);
}

async function callSubscribe(ctx: WatchContext, watch: WatchState, sub: LocalSubscription): Promise<void> {
  const secret = sub.secrets[0]?.secret as string;
  delete sub.provedEarly;
  // Durable before the call: the holder's challenge may arrive while the call is still running.
  await ctx.box.commit();
  try {
    const answer = await ctx.client.subscribe(watch.code, {
      url: sub.url,
      secret,
      ...(ctx.events === undefined ? {} : { events: ctx.events }),
    });
    apply(sub, answer);
  } catch (error) {
    if (!isAgentError(error)) throw error;
    await failed(ctx, watch, sub, error);
    return;
  }
  delete sub.retryAt;
  // A holder that answers a lease already due for renewal is asked again later, not at once.
  if (maintainNext(sub) <= ctx.clock()) sub.retryAt = ctx.clock() + ctx.timing.retryMs;
  await ctx.box.commit();
  await report(ctx, watch);
}

async function failed(ctx: WatchContext, watch: WatchState, sub: LocalSubscription, error: AgentError) {
  ctx.hooks.onError?.(handleOf(watch), error);
  const renewing = sub.subscriptionId !== undefined && sub.status !== "subscribing";
  if (renewing || TRANSIENT.has(error.code)) {
    sub.retryAt = ctx.clock() + ctx.timing.retryMs;
    await ctx.box.commit();
    return;
  }
  // Refused for good (no push, endpoint not allowed, …): nothing to keep but the reason.
  delete watch.subscription;
  await ctx.box.commit();
  await report(ctx, watch, `the holder refused: ${error.message}`);
}

export function apply(sub: LocalSubscription, answer: PushSubscription): void {
  if (sub.subscriptionId !== undefined && answer.subscriptionId !== sub.subscriptionId) {
    throw new AgentError(
      "ERR_AGENT_PROTOCOL",
      `the holder renewed subscription ${sub.subscriptionId} as ${answer.subscriptionId}; push profile §4.1 keeps the id`,
    );
  }
  sub.subscriptionId = answer.subscriptionId;
  // A doorbell may already have shown the subscription active while the call was answering.
  if (!(sub.status === "active" && answer.status.startsWith("awaiting"))) sub.status = answer.status;
  for (const key of ["approval", "expiresAt", "refreshBefore", "endedReason"] as const) {
    if (answer[key] === undefined) delete sub[key];
    else sub[key] = answer[key];
  }
  // The challenge may come, and be answered, before this answer does.
  if (sub.status === "awaiting_verification" && sub.provedEarly) sub.status = provedStatus(sub);
  delete sub.provedEarly;
}

/** Where a subscription stands once its endpoint is proved: active, or waiting for the person. */
export function provedStatus(sub: LocalSubscription): LocalSubscription["status"] {
  return sub.approval === "not-required" || sub.approval === "granted"
    ? "active"
    : "awaiting_person_approval";
}

/** subscription.ended (or the lease ran out here): read instead, and subscribe again when that needs no new approval. */
export async function ended(ctx: WatchContext, watch: WatchState, reason: string): Promise<void> {
  const sub = watch.subscription;
  if (sub === undefined) return;
  sub.status = "ended";
  sub.endedReason = reason;
  if (RESUBSCRIBE_REASONS.has(reason)) sub.retryAt = ctx.clock() + ctx.timing.resubscribeAfterMs;
  else delete sub.retryAt;
  await ctx.box.commit();
  await report(ctx, watch);
}

/** What is due for this subscription at `now`: a renewal, a retry, a local end of the lease; the time of the next. */
export async function maintain(
  ctx: WatchContext,
  watch: WatchState,
  baseUrl: string | undefined,
): Promise<number> {
  const sub = watch.subscription;
  if (sub === undefined || baseUrl === undefined) return Number.POSITIVE_INFINITY;
  const now = ctx.clock();
  const expires = sub.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(sub.expiresAt);
  if (sub.status !== "ended" && sub.status !== "subscribing" && expires <= now) {
    await ended(ctx, watch, "lease-expired");
    return maintainNext(sub);
  }
  const due = maintainNext(sub);
  if (due <= now) await resubscribe(ctx, watch);
  return maintainNext(sub);
}

function maintainNext(sub: LocalSubscription): number {
  if (sub.retryAt !== undefined) return sub.retryAt;
  if (sub.status === "ended") return Number.POSITIVE_INFINITY;
  const refresh = sub.refreshBefore === undefined ? Number.POSITIVE_INFINITY : Date.parse(sub.refreshBefore);
  const expires = sub.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(sub.expiresAt);
  return Math.min(refresh, expires);
}

export async function report(ctx: WatchContext, watch: WatchState, why?: string): Promise<void> {
  await ctx.hooks.onSubscription?.(handleOf(watch), reportOf(watch, why));
}
