/**
 * The forwarder's push side (push profile §7 rules 1–3 and 6): subscribe, renew and unsubscribe
 * pass through to the holder while the agent is present with its code.
 *
 * Subscribe: the agent's endpoint is proven first (a challenge through the delivery engine,
 * awaited here), then the holder's code is opened with the agent's code and the holder is asked to
 * ring our relay endpoint, with a fresh secret of ours and `relayFor` = the agent's host. The agent
 * gets the holder's answer with our subscriptionId. Nothing is left behind when any step refuses.
 */
import { DeliveryError, MAX_LEASE_MS, type SubscriptionView } from "@doorbell/delivery";
import { IntentsError } from "@doorbell/intents";
import { generateSecret } from "@doorbell/webhooks";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { relayPathFor } from "./codes.js";
import { deliveryDb, type ForwarderContext } from "./context.js";
import { openRecord } from "./records.js";
import { RELAY_PREFIX } from "./relay-endpoint.js";
import {
  endedRelaysAtHolder,
  endRelay,
  forgetHolderSide,
  insertRelay,
  ownedRelay,
  ownedRelays,
  recordHolderSide,
  relayForEndpoint,
  restoreHolderSecrets,
  rotateHolderSecret,
} from "./relays.js";
import type { RelayRow } from "./schema.js";
import { PUSH_EVENTS, type PushSubscription, pushSubscriptionOut } from "./schemas.js";

export interface SubscribeArgs {
  intentCode: string;
  delivery: { url: string; secret: string };
  events?: readonly (typeof PUSH_EVENTS)[number][] | undefined;
}

/** A holder's answer: its refusal passes through as it is; a success as a parsed subscription. */
export type HolderAnswer = { refused: CallToolResult } | { subscription: PushSubscription };

const DAY_MS = 24 * 60 * 60 * 1000;

export const notFound = () =>
  new IntentsError(
    "ERR_HOLDER_NOT_FOUND",
    "no intent has this intentCode (check it was copied whole; a draft nobody confirmed ends after 24 hours)",
  );

export interface PushSideOptions {
  /** How long subscribe waits for the agent's endpoint to answer its first challenge (default 15 s). */
  challengeWaitMs?: number;
  /** How often it looks (default 100 ms). */
  challengePollMs?: number;
}

// Longer than 150 lines: subscribe, renew, unsubscribe and ending share the challenge wait and
// the engine handle in one closure. Splitting it per operation, with a small context object as
// the holder's tools have, is the next step.
export function createPushSide(ctx: ForwarderContext, options: PushSideOptions = {}) {
  const waitMs = options.challengeWaitMs ?? 15_000;
  const pollMs = options.challengePollMs ?? 100;
  const db = () => deliveryDb(ctx.store.db);

  function holderAnswer(result: CallToolResult): HolderAnswer {
    if (result.isError === true) return { refused: result };
    const parsed = pushSubscriptionOut.safeParse(result.structuredContent);
    if (!parsed.success)
      throw new Error("the holder answered intent_subscribe_events with an unexpected shape");
    return { subscription: parsed.data };
  }

  /** Waits for the engine's first challenge to the agent: true once verified, false when it failed. */
  async function proven(id: string): Promise<boolean> {
    // Real time, not ctx.clock: this bounds a wait on the network, whatever the test clock says.
    const until = Date.now() + waitMs;
    for (;;) {
      const sub = await ctx.engine.get(db(), id);
      if (sub.verified) return true;
      if (sub.status === "ended" || sub.deliveryStatus.lastError === "challenge_failed") return false;
      if (Date.now() >= until) return false;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** The lease the holder gave, if the engine can hold it (future, at most 30 days). */
  function leaseOf(subscription: PushSubscription): { expiresAt: number; refreshBefore: number } | undefined {
    const expiresAt = Date.parse(subscription.expiresAt);
    const refreshBefore = Date.parse(subscription.refreshBefore);
    const now = ctx.clock();
    if (
      !(
        expiresAt > now &&
        expiresAt - now <= MAX_LEASE_MS &&
        refreshBefore > now &&
        refreshBefore <= expiresAt
      )
    )
      return undefined;
    return { expiresAt, refreshBefore };
  }

  async function endAgentSide(id: string, reason: string, notify: boolean): Promise<SubscriptionView> {
    return ctx.store.transaction(async (trx) => {
      await endRelay(trx, id, reason, ctx.clock());
      return ctx.engine.end(deliveryDb(trx), id, reason, { notify });
    });
  }

  const callHolderSubscribe = (
    holderCode: string,
    relayId: string,
    code: string,
    secret: string,
    args: SubscribeArgs,
  ) =>
    ctx.upstream.call("intent_subscribe_events", {
      intentCode: holderCode,
      delivery: { url: `${ctx.publicUrl}${RELAY_PREFIX}${relayPathFor(code, relayId)}`, secret },
      ...(args.events === undefined ? {} : { events: [...args.events] }),
      relayFor: new URL(args.delivery.url).hostname,
    });

  async function subscribe(args: SubscribeArgs): Promise<HolderAnswer> {
    const record = await openRecord(ctx, args.intentCode);
    if (record === undefined) throw notFound();
    const existing = await relayForEndpoint(ctx, args.intentCode, args.delivery.url);
    if (existing !== undefined) {
      const sub = await ctx.engine.get(db(), existing.agent_subscription_id);
      if (sub.status !== "ended") return renew(record.holderCode, existing, args);
      await endRelay(ctx.store.db, existing.agent_subscription_id, sub.endedReason ?? "ended", ctx.clock());
    }
    // Rule 6 with the agent present: holder sides its ended relays left running end before a new one.
    for (const ended of await endedRelaysAtHolder(ctx, args.intentCode)) {
      await endAtHolder(record.holderCode, ended);
    }

    // Rule 1: the agent's endpoint proves it wants doorbells before the holder hears of it.
    // The person approves at the holder (§6 rule 3), so the forwarder requires no approval of its own.
    const now = ctx.clock();
    let sub: SubscriptionView;
    try {
      sub = await ctx.engine.subscribe(db(), {
        channel: "push",
        url: args.delivery.url,
        secret: args.delivery.secret,
        expiresAt: now + MAX_LEASE_MS,
        refreshBefore: now + MAX_LEASE_MS - 3 * DAY_MS,
        requiresApproval: false,
      });
    } catch (error) {
      if (error instanceof DeliveryError) throw new IntentsError("ERR_HOLDER_INVALID", error.message);
      throw error;
    }
    const id = sub.id;
    if (!(await proven(id))) {
      await endAgentSide(id, "verification-failed", false);
      throw new IntentsError(
        "ERR_HOLDER_INVALID",
        'delivery.url did not answer the challenge: it must answer 200 with {"challenge": <the same value>} within 10 seconds (push profile §6 rule 2)',
      );
    }

    const holderSecret = generateSecret();
    // The record exists before the holder is asked, so its challenge to the relay finds it.
    await insertRelay(ctx, {
      agentSubscriptionId: id,
      path: relayPathFor(args.intentCode, id),
      forwarderCode: args.intentCode,
      agentUrl: args.delivery.url,
      holderHost: ctx.upstream.host,
      holderSecret,
      expiresAt: sub.expiresAt,
      refreshBefore: sub.refreshBefore,
    });
    let answer: HolderAnswer;
    try {
      answer = holderAnswer(
        await callHolderSubscribe(record.holderCode, id, args.intentCode, holderSecret, args),
      );
    } catch (error) {
      await endAgentSide(id, "upstream-failed", false);
      throw error;
    }
    if ("refused" in answer) {
      await endAgentSide(id, "refused-upstream", false);
      return answer;
    }
    await settle(id, answer.subscription);
    return { subscription: { ...answer.subscription, subscriptionId: id } };
  }

  /** The holder's answer decides our lease and whether ours lives on. */
  async function settle(id: string, holder: PushSubscription, agentSecret?: string): Promise<void> {
    const relay = await ctx.store.db
      .selectFrom("forwarder_relays")
      .select(["expires_at", "refresh_before"])
      .where("agent_subscription_id", "=", id)
      .executeTakeFirstOrThrow();
    let lease = leaseOf(holder) ?? { expiresAt: relay.expires_at, refreshBefore: relay.refresh_before };
    // Ours never outlives the holder's: when the agent's ends by lease, the holder's ends with it
    // (rule 6), since the forwarder cannot tell the holder without the agent (rule 1).
    const holderExpires = Date.parse(holder.expiresAt);
    if (holderExpires > ctx.clock() && holderExpires < lease.expiresAt) {
      lease = { expiresAt: holderExpires, refreshBefore: Math.min(lease.refreshBefore, holderExpires) };
    }
    await recordHolderSide(ctx, id, { holderSubscriptionId: holder.subscriptionId, ...lease });
    if (holder.status === "ended") {
      await endAgentSide(id, holder.endedReason ?? "ended", false);
      // The holder's side has ended: no end request goes back for it.
      await forgetHolderSide(ctx.store.db, id);
      return;
    }
    try {
      // On renewal the agent's secret too: the engine switches to it once it passes a challenge.
      await ctx.engine.renew(db(), id, agentSecret === undefined ? lease : { ...lease, secret: agentSecret });
    } catch (error) {
      if (error instanceof DeliveryError) throw new IntentsError("ERR_HOLDER_INVALID", error.message);
      throw error;
    }
  }

  /** Same code, same url (§4.1): a new lease on both sides and a new secret towards the holder. */
  async function renew(holderCode: string, relay: RelayRow, args: SubscribeArgs): Promise<HolderAnswer> {
    const id = relay.agent_subscription_id;
    const holderSecret = generateSecret();
    await rotateHolderSecret(ctx, relay, holderSecret);
    let answer: HolderAnswer;
    try {
      answer = holderAnswer(await callHolderSubscribe(holderCode, id, args.intentCode, holderSecret, args));
    } catch (error) {
      await restoreHolderSecrets(ctx, relay);
      throw error;
    }
    if ("refused" in answer) {
      await restoreHolderSecrets(ctx, relay);
      return answer;
    }
    await settle(id, answer.subscription, args.delivery.secret);
    return { subscription: { ...answer.subscription, subscriptionId: id } };
  }

  /**
   * Unsubscribes the relay's holder side with the holder's code the agent's code just opened, and
   * forgets it when the relay has ended. Undefined when the holder could not be told (nothing to
   * tell, or unreachable: its next doorbell gets 410).
   */
  async function endAtHolder(holderCode: string, relay: RelayRow): Promise<HolderAnswer | undefined> {
    if (relay.holder_subscription_id === null) return undefined;
    let answer: HolderAnswer;
    try {
      answer = holderAnswer(
        await ctx.upstream.call("intent_unsubscribe_events", {
          intentCode: holderCode,
          subscriptionId: relay.holder_subscription_id,
        }),
      );
    } catch (error) {
      ctx.log.warn(
        {
          event: "forwarder.unsubscribe_upstream_failed",
          error: error instanceof Error ? error.name : typeof error,
        },
        "the holder could not be told; its next doorbell gets 410",
      );
      return undefined;
    }
    // A refusal (already ended and deleted there, the intent gone) leaves nothing to end either.
    await forgetHolderSide(ctx.store.db, relay.agent_subscription_id);
    return answer;
  }

  /** Ends both sides (rule 6). Ours ends even when the holder cannot be told: it gets 410 next time. */
  async function unsubscribe(args: { intentCode: string; subscriptionId: string }): Promise<HolderAnswer> {
    const record = await openRecord(ctx, args.intentCode);
    if (record === undefined) throw notFound();
    const relay = await ownedRelay(ctx, args.intentCode, args.subscriptionId);
    if (relay === undefined) {
      throw new IntentsError(
        "ERR_HOLDER_NOT_FOUND",
        "this intent has no subscription with this subscriptionId",
      );
    }
    // Also when our side already ended without the agent: the holder's may still run (rule 1).
    // The holder first, so a doorbell racing the call does not end its side as "gone" instead.
    const holder = await endAtHolder(record.holderCode, relay);
    const ended = await endAgentSide(relay.agent_subscription_id, "unsubscribed", false);
    if (holder !== undefined) await forgetHolderSide(ctx.store.db, relay.agent_subscription_id);
    const base: PushSubscription =
      holder !== undefined && "subscription" in holder
        ? holder.subscription
        : {
            specVersion: "0.4",
            type: "push-subscription",
            subscriptionId: relay.agent_subscription_id,
            status: "ended",
            events: [...PUSH_EVENTS],
            expiresAt: new Date(ended.expiresAt).toISOString(),
            refreshBefore: new Date(ended.refreshBefore).toISOString(),
          };
    return {
      subscription: {
        ...base,
        subscriptionId: relay.agent_subscription_id,
        status: "ended",
        endedReason: ended.endedReason ?? "unsubscribed",
      },
    };
  }

  /** Withdrawing the intent ends every subscription to it (§4.2), here at once. */
  async function endAllFor(forwarderCode: string, reason: string): Promise<void> {
    for (const relay of await ownedRelays(ctx, forwarderCode)) {
      await endAgentSide(relay.agent_subscription_id, reason, true);
    }
  }

  return { subscribe, unsubscribe, endAllFor };
}

export type PushSide = ReturnType<typeof createPushSide>;
