/**
 * A subscription ended by whoever receives its doorbells, without the intentCode: the end request
 * (`@doorbell/intents` subscription-end.ts), signed with the subscription's own secret. A forwarder
 * sends it when its agent's side ended without the agent (push profile §7 rules 1 and 6), so the
 * holder's side ends at once instead of at its next doorbell.
 *
 * It ends the subscription the way a 410 from the endpoint does (§6 rule 5: no subscription.ended,
 * the endpoint asked), with the reason the receiver gives, so the manage page, the subscription's
 * resource and the person's receipts all see it. Anything that does not verify changes nothing.
 */
import { DeliveryError } from "@doorbell/delivery";
import { readSubscriptionEnd } from "@doorbell/intents";
import { WebhookError } from "@doorbell/webhooks";
import { emit, engineDb, type Push } from "./context.js";
import type { SubscriberEndAnswer, SubscriberEndCode } from "./types.js";

/** Longer than the ±300 s timestamp window: an id seen within it is never acted on twice. */
const SEEN_KEEP_MS = 10 * 60 * 1000;

const refused = (status: 400 | 401 | 409, code: SubscriberEndCode, message: string): SubscriberEndAnswer => ({
  ok: false,
  status,
  code,
  message,
});

/** Said for an unknown subscription as for a wrong secret: the answer tells no one which ids exist. */
const UNVERIFIED = "no signature matched: sign the exact body with this subscription's secret";

function parsed(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
}

/** Headers that are missing or malformed are the sender's mistake (400); a bad signature or time is 401. */
function verificationRefusal(error: WebhookError): SubscriberEndAnswer {
  switch (error.code) {
    case "ERR_WEBHOOK_SIGNATURE_MISMATCH":
    case "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE":
      return refused(401, "ERR_PUSH_END_UNVERIFIED", UNVERIFIED);
    case "ERR_WEBHOOK_TIMESTAMP_TOO_OLD":
    case "ERR_WEBHOOK_TIMESTAMP_TOO_NEW":
      return refused(401, "ERR_PUSH_END_UNVERIFIED", error.message);
    default:
      return refused(400, "ERR_PUSH_END_INVALID", error.message);
  }
}

export async function endBySubscriber(
  push: Push,
  headers: Headers,
  body: Uint8Array,
): Promise<SubscriberEndAnswer> {
  const json = parsed(body);
  if (json === undefined) return refused(400, "ERR_PUSH_END_INVALID", "the body is not UTF-8 JSON");
  const end = readSubscriptionEnd(json);
  if ("problem" in end) return refused(400, "ERR_PUSH_END_INVALID", end.problem);
  const id = end.subscriptionId;
  const known = await push.store.db
    .selectFrom("holder_push")
    .select("id")
    .where("id", "=", id)
    .executeTakeFirst();
  if (known === undefined) return refused(401, "ERR_PUSH_END_UNVERIFIED", UNVERIFIED);
  let webhookId: string;
  try {
    ({ id: webhookId } = await push.engine.verifyFromSubscriber(engineDb(push.store.db), id, headers, body));
  } catch (error) {
    if (error instanceof WebhookError) return verificationRefusal(error);
    if (error instanceof DeliveryError && error.code === "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION")
      return refused(401, "ERR_PUSH_END_UNVERIFIED", UNVERIFIED);
    throw error;
  }

  const now = push.ctx.clock();
  const answer = await push.store.transaction(async (trx): Promise<SubscriberEndAnswer> => {
    await trx
      .deleteFrom("holder_push_end_seen")
      .where("seen_at", "<", now - SEEN_KEEP_MS)
      .execute();
    // The id is recorded in the transaction that ends the subscription: of two processes given the
    // same request, one ends it and the other finds the id taken.
    const fresh = await trx
      .insertInto("holder_push_end_seen")
      .values({ subscription_id: id, webhook_id: webhookId, seen_at: now })
      .onConflict((oc) => oc.columns(["subscription_id", "webhook_id"]).doNothing())
      .returning("webhook_id")
      .execute();
    if (fresh.length === 0)
      return refused(409, "ERR_PUSH_END_REPLAYED", "this webhook-id was received already; nothing changed");
    // No subscription.ended: the receiver asked, as a 410 does. Already ended: its reason stays.
    const ended = await push.engine.end(engineDb(trx), id, end.reason, { notify: false });
    return { ok: true, subscriptionId: id, endedReason: ended.endedReason ?? end.reason };
  });
  if (answer.ok) {
    push.ctx.log.info(
      { event: "push.ended_by_receiver", subscriptionId: id, reason: answer.endedReason },
      "the receiver ended its subscription",
    );
    emit(push, [id]);
  }
  return answer;
}
