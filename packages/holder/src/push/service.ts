/**
 * The push profile 0.4 on the holder (§4, §6 rules 3, 6, 7, 9): subscriptions made with an
 * intentCode, the person's approval (a separate choice on the consent page, or a link sent to the
 * verified channel), revocation, and the doorbells themselves, queued through the delivery engine
 * in the same transaction as the change they announce.
 *
 * The delivery engine owns the endpoint, the secret (both sealed), the challenge, retries,
 * coalescing and the lease; this service owns what the holder adds: which intent a subscription
 * belongs to, how the person approves it, and what the pages show. Nothing here returns a url, a
 * secret or a code; the hosts the person is shown are sealed at rest. Each operation lives in its
 * own module; this one only binds them to one shared context.
 */
import type { HolderContext } from "../context.js";
import { onActivated } from "./activation.js";
import { approvalView, approve, approveByToken } from "./approval.js";
import { chooseOnConsent, consentChoices } from "./consent-choices.js";
import { createPush, emit } from "./context.js";
import { changed, onIntentEnded, sweep } from "./ending.js";
import { catchUpMatches, enqueueMatches } from "./enqueue-matches.js";
import { receipts, revoke } from "./receipts.js";
import { subscribe } from "./subscribe.js";
import { endBySubscriber } from "./subscriber-end.js";
import type { PushOptions, PushService } from "./types.js";
import { unsubscribe, viewSubscription } from "./unsubscribe.js";

export type {
  NotificationReceipt,
  PushOptions,
  PushService,
  PushStatus,
  PushSubscriptionView,
  SubscribeRequest,
} from "./types.js";

export function createPushService(ctx: HolderContext, options: PushOptions): PushService {
  const push = createPush(ctx, options);
  return {
    subscribe: (principal, request) => subscribe(push, principal, request),
    unsubscribe: (principal, id) => unsubscribe(push, principal, id),
    view: (principal, id) => viewSubscription(push, principal, id),
    enqueueMatches: (trx, found) => enqueueMatches(push, trx, found),
    catchUpMatches: (trx, intentId) => catchUpMatches(push, trx, intentId),
    onActivated: (intentId) => onActivated(push, intentId),
    onIntentEnded: (intentId, reason) => onIntentEnded(push, intentId, reason),
    consentChoices: (intentId) => consentChoices(push, intentId),
    chooseOnConsent: (intentId, chosen) => chooseOnConsent(push, intentId, chosen),
    approvalView: (token) => approvalView(push, token),
    approveByToken: (token) => approveByToken(push, token),
    receipts: (intentId) => receipts(push, intentId),
    approve: (intentId, id) => approve(push, intentId, id),
    revoke: (intentId, id) => revoke(push, intentId, id),
    endBySubscriber: (headers, body) => endBySubscriber(push, headers, body),
    sweep: () => sweep(push),
    onChange(listener) {
      push.listeners.add(listener);
      return () => push.listeners.delete(listener);
    },
    relay: (ids) => emit(push, ids),
    intentOf: async (id) =>
      (
        await push.store.db
          .selectFrom("holder_push")
          .select("intent_id")
          .where("id", "=", id)
          .executeTakeFirst()
      )?.intent_id,
    exists: async (id) =>
      (await push.store.db.selectFrom("holder_push").select("id").where("id", "=", id).executeTakeFirst()) !==
      undefined,
    changed: (intentIds) => changed(push, intentIds),
  };
}
