/**
 * intent_subscribe_events (§4.1): a new subscription waiting for the person's approval, or a
 * renewal when the same code subscribes the same url again.
 */

import { PUSH_EVENTS } from "@doorbell/intents";
import { effectiveStatus } from "../intents/index.js";
import { HolderError, type Principal } from "../model/types.js";
import { mailApproval } from "./approval.js";
import { engineDb, type Push, type PushDb } from "./context.js";
import {
  engineCall,
  engineView,
  enqueueStatus,
  intentIdOf,
  lease,
  liveRows,
  renewLease,
  rowsOf,
} from "./rows.js";
import type { Approval, PushRow } from "./schema.js";
import type { PushSubscriptionView, SubscribeRequest } from "./types.js";
import { answer, hostsAad } from "./views.js";

/** A host name as relayFor carries it (§7 rule 3): at most 253 characters, LDH labels. */
const HOST_NAME =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** The delivery url as the holder compares it for renewals: parsed and re-serialised. */
function normalisedUrl(url: string): string {
  try {
    return new URL(url).toString();
  } catch {
    throw new HolderError("ERR_HOLDER_INVALID", "delivery.url is not a URL");
  }
}

/** Reasons a subscription ended that do not take the person's approval back. */
const APPROVAL_KEPT = new Set([
  "lease-expired",
  "delivery-failed",
  "unsubscribed",
  "gone",
  "verification-failed",
]);

/**
 * Whether the person's approval still holds for this url: the newest earlier subscription of the
 * intent to it was approved and ended for a reason that does not take the approval back.
 */
async function approvedUrl(
  push: Push,
  db: PushDb,
  intentId: string,
  hashes: ReadonlySet<string>,
): Promise<boolean> {
  const newestFirst = (await rowsOf(db, intentId)).reverse();
  const last = newestFirst.find((row) => row.test === 0 && hashes.has(row.url_hash));
  if (last === undefined || last.approval !== "granted") return false;
  const sub = await engineView(push, db, last.id);
  return sub?.status === "ended" && sub.endedReason !== null && APPROVAL_KEPT.has(sub.endedReason);
}

export async function subscribe(
  push: Push,
  principal: Principal,
  request: SubscribeRequest,
): Promise<PushSubscriptionView> {
  const { ctx, engine } = push;
  const intentId = intentIdOf(principal);
  const events =
    request.events === undefined || request.events.length === 0
      ? [...PUSH_EVENTS]
      : [...new Set(request.events)];
  if (request.relayFor !== undefined && !HOST_NAME.test(request.relayFor)) {
    throw new HolderError("ERR_HOLDER_INVALID", "relayFor must be a host name of at most 253 characters");
  }
  const url = normalisedUrl(request.delivery.url);
  const now = ctx.clock();
  const test = request.test === true;
  const result = await push.store.transaction(async (trx) => {
    const intent = await trx
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intentId)
      .executeTakeFirst();
    if (intent === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
    const status = effectiveStatus(intent, now);
    if (status === "expired" || status === "withdrawn") {
      throw new HolderError(
        "ERR_HOLDER_GONE",
        `this intent has ${status === "expired" ? "expired" : "been withdrawn"}: nothing more can change for it`,
      );
    }
    const ends =
      status === "awaiting_consent" && intent.draft_expires_at !== null
        ? intent.draft_expires_at
        : intent.valid_until;
    const live = await liveRows(push, trx, intentId);
    const hashes = new Set(ctx.codes.lookupHashes(url));
    const same = live.find(({ row }) => hashes.has(row.url_hash) && row.test === (test ? 1 : 0));
    if (same !== undefined) {
      // §4.1: the same code and url renew (same id, new lease, the new secret after its challenge).
      // A test call renews only a test subscription, and never past its first minutes (rule 9).
      const sub = await renewLease(push, trx, same.row, ends, request.delivery.secret);
      if (sub !== undefined) {
        await trx
          .updateTable("holder_push")
          .set({ events_json: JSON.stringify(events) })
          .where("id", "=", same.row.id)
          .execute();
        return { view: answer({ ...same.row, events_json: JSON.stringify(events) }, sub), mail: false };
      }
      // Its lease was over and it has ended: this call is a new subscription, not a revival.
      live.splice(live.indexOf(same), 1);
    }
    if (live.length >= push.maxPerIntent) {
      throw new HolderError(
        "ERR_HOLDER_CONFLICT",
        `this intent already has ${live.length} notification subscriptions, the most allowed (push profile §6 rule 6); unsubscribe one first`,
      );
    }
    // §6 rule 3, §4.1: the person's approval holds for this url until the intent ends or they take
    // it back, so a subscription that ran out (lease-expired, delivery-failed) is made again without
    // asking.
    const approvedBefore = !test && status === "active" && (await approvedUrl(push, trx, intentId, hashes));
    const approval: Approval = test
      ? "not-required"
      : approvedBefore
        ? "granted"
        : status === "awaiting_consent"
          ? "on-consent-page"
          : "sent-to-verified-channel";
    const sub = await engineCall(() =>
      engine.subscribe(engineDb(trx), {
        channel: "push",
        url,
        secret: request.delivery.secret,
        ...lease(push, now, ends, { test: test ? 1 : 0, created_at: now }),
        requiresApproval: !test && !approvedBefore,
      }),
    );
    const row: PushRow = {
      id: sub.id,
      intent_id: intentId,
      url_hash: ctx.codes.hash(url),
      hosts_sealed: ctx.sealer.seal(
        JSON.stringify({
          deliveryHost: new URL(url).hostname,
          ...(request.relayFor === undefined ? {} : { relayFor: request.relayFor.toLowerCase() }),
        }),
        hostsAad(sub.id),
      ),
      events_json: JSON.stringify(events),
      approval,
      consent_choice: 0,
      approval_token_hash: null,
      approval_sent_at: null,
      test: test ? 1 : 0,
      created_at: now,
    };
    await trx.insertInto("holder_push").values(row).execute();
    // Rule 9: the test subscription hears the current status once it has proved its endpoint; an
    // approved one hears that it is on (as after the person's approval), once it has proved it.
    if (test || approvedBefore) await enqueueStatus(push, trx, row, status);
    return { view: answer(row, sub), mail: approval === "sent-to-verified-channel" && status === "active" };
  });
  ctx.log.info(
    { event: "push.subscribed", intentId, subscriptionId: result.view.subscriptionId },
    "push subscription",
  );
  if (result.mail) await mailApproval(push, intentId, result.view.subscriptionId);
  return result.view;
}
