import type { Insertable, Kysely } from "@doorbell/store";
import { reserveArrivals } from "../matching/reader.js";
import type { FoundMatches } from "../matching/service.js";
import { offerFromRow } from "../model/offer-rows.js";
import type { CatalogueOfferInput, OfferService } from "../model/services.js";
import type { HolderTables, OfferRow } from "../model/tables.js";
import type { Offer } from "../model/types.js";
import { content, type OfferContext, sameContent } from "./offer-write.js";
import { validateCatalogueOffers } from "./validate.js";

/**
 * A catalogue import: offers upserted by source.ref a batch per transaction, the new and changed
 * ones matched against the active intents in the same transaction, the intents told at the end.
 */

export async function importCatalogue(
  ctx: OfferContext,
  offers: Parameters<OfferService["importCatalogue"]>[0],
): ReturnType<OfferService["importCatalogue"]> {
  const { store, clock, log, matching, batchSize } = ctx;
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
      const result = await store.transaction((trx) => importBatch(ctx, trx, batch, round));
      inserted += result.inserted;
      updated += result.updated;
      matched += result.found.count;
      for (const id of result.found.firstInRound) told.push(id);
    }
  } finally {
    // What was committed before a stream failed is told too, not left for a re-run that
    // finds it unchanged.
    await matching.notify(told);
    // Intents that became active meanwhile where this process's index did not hear of them
    // (another process, a missed notification) are rung for what was written.
    await matching.catchUpSince(startedAt);
  }
  log.info({ inserted, updated, matched }, "catalogue imported");
  return { inserted, updated, matched };
}

async function importBatch(
  ctx: OfferContext,
  trx: Kysely<HolderTables>,
  batch: readonly CatalogueOfferInput[],
  round: number,
): Promise<{ inserted: number; updated: number; found: FoundMatches }> {
  const { store, clock, matching, newId } = ctx;
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
    // gives none does not look changed on every import.
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
