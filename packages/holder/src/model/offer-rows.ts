import type { OfferRow } from "../model/tables.js";
import type { Offer } from "./types.js";

/** JSON with keys in sorted order, so an unchanged offer serialises to the same text. */
export function stableAttributesJson(attributes: Record<string, string | number>): string {
  const sorted: Record<string, string | number> = {};
  for (const key of Object.keys(attributes).sort()) sorted[key] = attributes[key] as string | number;
  return JSON.stringify(sorted);
}

/**
 * A reply's reference is the seller's, so it is stored prefixed with the intent it answers: two
 * sellers (or one seller answering two intents) may use the same reference without colliding on
 * the (source_kind, source_ref) unique key.
 */
export function replyRef(inReplyTo: string, ref: string): string {
  return `${inReplyTo}/${ref}`;
}

export function offerFromRow(row: OfferRow): Offer {
  let ref = row.source_ref ?? undefined;
  if (row.source_kind === "reply" && ref !== undefined && row.in_reply_to !== null) {
    const prefix = `${row.in_reply_to}/`;
    ref = ref.startsWith(prefix) ? ref.slice(prefix.length) : ref;
  }
  const offer: Offer = {
    id: row.id,
    source: {
      kind: row.source_kind,
      ...(ref !== undefined ? { ref } : {}),
      ...(row.seller !== null ? { seller: row.seller } : {}),
    },
    ...(row.in_reply_to !== null ? { inReplyTo: row.in_reply_to } : {}),
    title: row.title,
    ...(row.description !== null ? { description: row.description } : {}),
    category: row.category,
    price: { amount: Number(row.price_amount), currency: row.price_currency },
    location: { country: row.country, ...(row.region !== null ? { region: row.region } : {}) },
    ...(row.url !== null ? { url: row.url } : {}),
    attributes: JSON.parse(row.attributes_json) as Record<string, string | number>,
    publishedAt: new Date(Number(row.published_at)).toISOString(),
  };
  return offer;
}
