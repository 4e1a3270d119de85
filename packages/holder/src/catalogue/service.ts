import { randomUUID } from "node:crypto";
import type { Insertable, Kysely } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import { reserveArrivals } from "../matching/reader.js";
import { fits, intentFilter, offerFacts } from "../matching/rule.js";
import { FILTER_COLUMNS, type FoundMatches, type MatchingService } from "../matching/service.js";
import { offerFromRow, replyRef, stableAttributesJson } from "../model/offer-rows.js";
import type { CatalogueOfferInput, OfferService, ReplyOfferInput } from "../model/services.js";
import type { HolderTables, OfferRow } from "../model/tables.js";
import type { Offer } from "../model/types.js";
import { searchOffers } from "./search.js";
import { validateCatalogueOffers, validateReplyOffer } from "./validate.js";

export interface OfferServiceOptions {
  /** New offer ids (default `off_` + a random UUID). */
  newId?: () => string;
  /** Offers written (and matched) per transaction during an import (default 500). */
  batchSize?: number;
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

type Content = Pick<OfferRow, (typeof CONTENT_COLUMNS)[number]>;

function content(offer: CatalogueOfferInput | ReplyOfferInput, publishedAt: number): Content {
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

function sameContent(row: OfferRow, next: Content): boolean {
  return CONTENT_COLUMNS.every((column) => {
    const a = row[column];
    const b = next[column];
    return typeof b === "number" ? Number(a) === b : a === b;
  });
}

/**
 * Offers: catalogue import (upsert by source.ref, new and changed offers matched against the
 * active intents in the same transaction), seller replies to pseudonymous intents, and search.
 */
export function createOfferService(
  ctx: HolderContext,
  matching: MatchingService,
  options: OfferServiceOptions = {},
): OfferService {
  const { store, clock, log } = ctx;
  const newId = options.newId ?? (() => `off_${randomUUID()}`);
  const batchSize = options.batchSize ?? 500;

  async function importBatch(
    trx: Kysely<HolderTables>,
    batch: readonly CatalogueOfferInput[],
    round: number,
  ): Promise<{ inserted: number; updated: number; found: FoundMatches }> {
    const now = clock();
    const { at, firstSeq } = await reserveArrivals(trx, store.dialect, now);
    let seq = firstSeq;
    const existing = new Map<string, OfferRow>();
    const rows = await trx
      .selectFrom("holder_offers")
      .selectAll()
      .where("source_kind", "=", "catalogue")
      .where(
        "source_ref",
        "in",
        batch.map((offer) => offer.source.ref),
      )
      .execute();
    for (const row of rows) existing.set(row.source_ref as string, row);

    const inserts: Insertable<OfferRow>[] = [];
    const changed: Offer[] = [];
    let updated = 0;
    for (const offer of batch) {
      const old = existing.get(offer.source.ref);
      // Without its own publishedAt an offer keeps the time it was first seen, so a feed that
      // gives none does not look changed on every import (issue 16 item 8).
      const publishedAt =
        offer.publishedAt !== undefined
          ? Date.parse(offer.publishedAt)
          : old !== undefined
            ? Number(old.published_at)
            : now;
      const next = content(offer, publishedAt);
      if (old === undefined) {
        const row: OfferRow = {
          id: newId(),
          source_kind: "catalogue",
          source_ref: offer.source.ref,
          in_reply_to: null,
          created_at: now,
          withdrawn_at: null,
          matched_at: at,
          match_seq: seq++,
          ...next,
        };
        inserts.push(row);
        changed.push(offerFromRow(row));
      } else if (!sameContent(old, next) || old.withdrawn_at !== null) {
        // A changed offer enters matching again: delivered anew to every intent it fits now.
        const again = { ...next, withdrawn_at: null, matched_at: at, match_seq: seq++ };
        await trx.updateTable("holder_offers").set(again).where("id", "=", old.id).execute();
        updated++;
        changed.push(offerFromRow({ ...old, ...again }));
      }
    }
    if (inserts.length > 0) await trx.insertInto("holder_offers").values(inserts).execute();
    const found = await matching.matchNewOffers(trx, changed, at, round);
    return { inserted: inserts.length, updated, found };
  }

  return {
    async importCatalogue(offers) {
      const batches = Array.isArray(offers)
        ? batchesOf(validateCatalogueOffers(offers), batchSize)
        : checkedBatches(offers as AsyncIterable<CatalogueOfferInput>, batchSize);
      let inserted = 0;
      let updated = 0;
      let matched = 0;
      // Intents to tell, each once, not every match: at 1,000,000 intents an import finds millions.
      const told: string[] = [];
      await matching.start();
      const round = matching.newRound();
      const startedAt = clock();
      try {
        for await (const batch of batches) {
          const result = await store.transaction((trx) => importBatch(trx, batch, round));
          inserted += result.inserted;
          updated += result.updated;
          matched += result.found.count;
          for (const id of result.found.firstInRound) told.push(id);
        }
      } finally {
        // What was committed before a stream failed is told too, not left for a re-run that
        // finds it unchanged.
        await matching.notify(told);
        // Issue 14 item 4: intents that became active meanwhile where this process's index did
        // not hear of them (another process, a missed notification) are rung for what was written.
        await matching.catchUpSince(startedAt);
      }
      log.info({ inserted, updated, matched }, "catalogue imported");
      return { inserted, updated, matched };
    },

    async submitReply(input) {
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
    },

    search(statement, limit) {
      return searchOffers(store, statement, limit);
    },
  };
}

function* batchesOf<T>(items: readonly T[], size: number): Generator<readonly T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/**
 * A stream of offers in validated batches. A ref repeated within a batch is refused; across
 * batches its caller checks (checkCatalogueFile does), so nothing per offer is kept here.
 */
async function* checkedBatches(
  offers: AsyncIterable<CatalogueOfferInput>,
  size: number,
): AsyncGenerator<readonly CatalogueOfferInput[]> {
  let batch: CatalogueOfferInput[] = [];
  for await (const offer of offers) {
    batch.push(offer);
    if (batch.length >= size) {
      yield validateCatalogueOffers(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield validateCatalogueOffers(batch);
}

/** The message a refused reply carries wherever a reason is shown (MCP layer). */
export const REPLY_NOT_ACCEPTED = "this intent is not accepting replies";
