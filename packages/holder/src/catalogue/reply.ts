import { reserveArrivals } from "../matching/reader.js";
import { fits, intentFilter, offerFacts } from "../matching/rule.js";
import { FILTER_COLUMNS } from "../matching/service.js";
import { offerFromRow, replyRef } from "../model/offer-rows.js";
import type { ReplyOfferInput } from "../model/services.js";
import type { OfferRow } from "../model/tables.js";
import { content, type OfferContext } from "./offer-write.js";
import { validateReplyOffer } from "./validate.js";

/**
 * A seller's reply to a pseudonymous intent: written and matched for that one intent only when
 * the intent is active, pseudonymous and the offer fits it; the seller learns nothing else.
 */
export async function submitReply(ctx: OfferContext, input: ReplyOfferInput): Promise<{ accepted: boolean }> {
  const { store, clock, matching, newId } = ctx;
  const offer = validateReplyOffer(input);
  const intentId = offer.inReplyTo;
  const recorded = await store.transaction(async (trx) => {
    const now = clock();
    const intent = await trx
      .selectFrom("holder_intents")
      .select([...FILTER_COLUMNS, "status", "visibility"])
      .where("id", "=", intentId)
      .executeTakeFirst();
    // One answer for every refusal: the seller learns nothing about why (or whether the intent exists).
    if (intent?.status !== "active" || intent.visibility !== "pseudonymous") return undefined;
    const filter = intentFilter(intent);
    if (filter === undefined || !fits(filter, offerFacts(offer), now)) return undefined;

    const ref = offer.source.ref !== undefined ? replyRef(intentId, offer.source.ref) : null;
    if (ref !== null) {
      const again = await trx
        .selectFrom("holder_offers")
        .select("id")
        .where("source_kind", "=", "reply")
        .where("source_ref", "=", ref)
        .executeTakeFirst();
      if (again) return null; // the same reply sent twice: accepted once
    }
    const { at, firstSeq } = await reserveArrivals(trx, store.dialect, now);
    const row: OfferRow = {
      id: newId(),
      source_kind: "reply",
      source_ref: ref,
      in_reply_to: intentId,
      created_at: now,
      withdrawn_at: null,
      matched_at: at,
      match_seq: firstSeq,
      ...content(offer, now),
    };
    await trx.insertInto("holder_offers").values(row).execute();
    return matching.matchReply(trx, offerFromRow(row), intentId, at);
  });
  if (recorded === undefined) return { accepted: false };
  if (recorded !== null) await matching.notify(recorded.firstInRound);
  return { accepted: true };
}
