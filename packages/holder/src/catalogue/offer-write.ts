import type { HolderContext } from "../context.js";
import type { MatchingService } from "../matching/service.js";
import { stableAttributesJson } from "../model/offer-rows.js";
import type { CatalogueOfferInput, ReplyOfferInput } from "../model/services.js";
import type { OfferRow } from "../model/tables.js";

/** What the offer service's writes share: an import (import.ts) and a reply (reply.ts). */

export interface OfferContext {
  readonly store: HolderContext["store"];
  readonly clock: HolderContext["clock"];
  readonly log: HolderContext["log"];
  readonly matching: MatchingService;
  /** A new offer's id. */
  readonly newId: () => string;
  /** Offers written (and matched) per transaction during an import. */
  readonly batchSize: number;
}

/** The columns an offer's content sets; a catalogue offer whose columns are all equal is unchanged. */
const CONTENT_COLUMNS = [
  "seller",
  "title",
  "description",
  "category",
  "price_amount",
  "price_currency",
  "country",
  "region",
  "url",
  "attributes_json",
  "published_at",
] as const;

export type Content = Pick<OfferRow, (typeof CONTENT_COLUMNS)[number]>;

export function content(offer: CatalogueOfferInput | ReplyOfferInput, publishedAt: number): Content {
  return {
    seller: offer.source.seller ?? null,
    title: offer.title,
    description: offer.description ?? null,
    category: offer.category,
    price_amount: offer.price.amount,
    price_currency: offer.price.currency,
    country: offer.location.country,
    region: offer.location.region ?? null,
    url: offer.url ?? null,
    attributes_json: stableAttributesJson(offer.attributes),
    published_at: publishedAt,
  };
}

export function sameContent(row: OfferRow, next: Content): boolean {
  return CONTENT_COLUMNS.every((column) => {
    const a = row[column];
    const b = next[column];
    return typeof b === "number" ? Number(a) === b : a === b;
  });
}
