/**
 * A message signed by a push subscription's receiver, checked with the secret it shares with the
 * engine: the way back of a doorbell (the receiver asking for its subscription to end, say). The
 * secrets never leave the engine; the caller learns only whether the message verifies.
 */
import {
  type BodyInput,
  createStandardVerifier,
  type HeadersLike,
  type VerifiedStandardWebhook,
} from "@doorbell/webhooks";
import { type Db, type EngineContext, secretAd } from "./context.js";
import { DeliveryError } from "./errors.js";
import { load } from "./subscriptions.js";

/**
 * Verifies Standard Webhooks headers over `body` with any secret the receiver may hold: the
 * current one, the previous one while a rotation overlaps, and a renewal's new one still awaiting
 * its challenge (the receiver switched to it when it asked). Throws a `WebhookError` saying what
 * failed (timestamp window, signature), or `ERR_DELIVERY_UNKNOWN_SUBSCRIPTION` when there is no
 * push subscription with this id or its secret is gone.
 */
export async function verifyFromSubscriber(
  ctx: EngineContext,
  db: Db,
  id: string,
  headers: HeadersLike,
  body: BodyInput,
): Promise<VerifiedStandardWebhook> {
  const row = await load(db, id);
  if (row.channel !== "push" || row.secret_sealed === null)
    throw new DeliveryError("ERR_DELIVERY_UNKNOWN_SUBSCRIPTION", "no such subscription");
  const secrets = [ctx.sealer.openText(row.secret_sealed, secretAd(id, "current"))];
  if (row.pending_secret_sealed !== null)
    secrets.push(ctx.sealer.openText(row.pending_secret_sealed, secretAd(id, "pending")));
  if (
    row.previous_secret_sealed !== null &&
    row.previous_secret_until !== null &&
    ctx.clock() < row.previous_secret_until
  )
    secrets.push(ctx.sealer.openText(row.previous_secret_sealed, secretAd(id, "previous")));
  return createStandardVerifier({ secrets, clock: ctx.clock }).verify(headers, body);
}
