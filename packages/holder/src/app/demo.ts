/** The built-in demo catalogue, imported once per database. */
import { demoCatalogue } from "../catalogue/demo-catalogue.js";
import type { HolderContext } from "../context.js";
import type { OfferService } from "../model/services.js";

/** The demo catalogue's refs all start so (catalogue/demo-catalogue.ts). */
const DEMO_REF_PREFIX = "demo-";

/**
 * Imports the built-in demo catalogue unless the database already holds demo offers, so a
 * restart neither re-imports nor re-matches it. Offers are dated in the 60 days before now.
 */
export async function importDemoCatalogueOnce(
  ctx: HolderContext,
  offers: OfferService,
): Promise<{ imported: number; skipped: boolean }> {
  const existing = await ctx.store.db
    .selectFrom("holder_offers")
    .select("id")
    .where("source_kind", "=", "catalogue")
    .where("source_ref", "like", `${DEMO_REF_PREFIX}%`)
    .limit(1)
    .executeTakeFirst();
  if (existing !== undefined) return { imported: 0, skipped: true };
  const result = await offers.importCatalogue(demoCatalogue({ now: ctx.clock() }));
  return { imported: result.inserted + result.updated, skipped: false };
}
