import { defineMigrations, type Migration, sql } from "@doorbell/store";
import { offerSearch } from "../catalogue/search-schema.js";

const core: Migration = {
  version: 1,
  name: "intents_offers_matches_mail",
  async up(db, { types, autoId }) {
    await db.schema
      .createTable("holder_intents")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("code_hash", "text", (c) => c.notNull().unique())
      .addColumn("consent_token_hash", "text", (c) => c.unique())
      .addColumn("confirm_token_hash", "text", (c) => c.unique())
      .addColumn("manage_token_hash", "text", (c) => c.unique())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("statement", "text", (c) => c.notNull())
      .addColumn("criteria_json", types.json)
      .addColumn("category", "text")
      .addColumn("country", "text", (c) => c.notNull())
      .addColumn("region", "text")
      .addColumn("budget_amount", types.bigint)
      .addColumn("budget_currency", "text")
      .addColumn("hidden_limit_sealed", "text")
      .addColumn("buy_by", types.timestamp)
      .addColumn("valid_until", types.timestamp, (c) => c.notNull())
      .addColumn("visibility", "text", (c) => c.notNull())
      .addColumn("pseudonym", "text")
      .addColumn("contact_sealed", "text")
      .addColumn("contact_hash", "text")
      .addColumn("consent_version", "text")
      .addColumn("draft_expires_at", types.timestamp)
      .addColumn("confirm_expires_at", types.timestamp)
      .addColumn("created_at", types.timestamp, (c) => c.notNull())
      .addColumn("updated_at", types.timestamp, (c) => c.notNull())
      .addColumn("consented_at", types.timestamp)
      .addColumn("confirmed_at", types.timestamp)
      .addColumn("ended_at", types.timestamp)
      .execute();
    await db.schema
      .createIndex("holder_intents_matching")
      .on("holder_intents")
      .columns(["status", "category", "country"])
      .execute();
    await db.schema
      .createIndex("holder_intents_contact")
      .on("holder_intents")
      .column("contact_hash")
      .execute();

    await db.schema
      .createTable("holder_offers")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("source_kind", "text", (c) => c.notNull())
      .addColumn("source_ref", "text")
      .addColumn("seller", "text")
      .addColumn("in_reply_to", "text")
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("category", "text", (c) => c.notNull())
      .addColumn("price_amount", types.bigint, (c) => c.notNull())
      .addColumn("price_currency", "text", (c) => c.notNull())
      .addColumn("country", "text", (c) => c.notNull())
      .addColumn("region", "text")
      .addColumn("url", "text")
      .addColumn("attributes_json", types.json, (c) => c.notNull())
      .addColumn("published_at", types.timestamp, (c) => c.notNull())
      .addColumn("created_at", types.timestamp, (c) => c.notNull())
      .addColumn("withdrawn_at", types.timestamp)
      .addUniqueConstraint("holder_offers_source", ["source_kind", "source_ref"])
      .execute();
    await db.schema
      .createIndex("holder_offers_matching")
      .on("holder_offers")
      .columns(["category", "country", "price_amount"])
      .execute();
    await db.schema.createIndex("holder_offers_reply").on("holder_offers").column("in_reply_to").execute();

    await db.schema
      .createTable("holder_matches")
      .$call(autoId("id"))
      .addColumn("intent_id", "text", (c) => c.notNull().references("holder_intents.id").onDelete("cascade"))
      .addColumn("offer_id", "text", (c) => c.notNull().references("holder_offers.id").onDelete("cascade"))
      .addColumn("delivered_at", types.timestamp, (c) => c.notNull())
      .addColumn("mailed_at", types.timestamp)
      .addUniqueConstraint("holder_matches_once", ["intent_id", "offer_id"])
      .execute();
    await db.schema
      .createIndex("holder_matches_since")
      .on("holder_matches")
      .columns(["intent_id", "delivered_at"])
      .execute();

    await db.schema
      .createTable("holder_mail")
      .$call(autoId("id"))
      .addColumn("to_sealed", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("text_body", "text", (c) => c.notNull())
      .addColumn("html_body", "text", (c) => c.notNull())
      .addColumn("created_at", types.timestamp, (c) => c.notNull())
      .execute();
  },
};

/**
 * Migration 3: matches are derived from offers and intents when read, never written one row per
 * (offer, intent) (docs/decisions.md, "Matches are read, not written"). Offers get their place in
 * matching, intents the moment their criteria took effect and the digest's watermark, and
 * holder_matches goes. Existing matches count as mailed: nothing is mailed twice after upgrading.
 */
const derivedMatches: Migration = {
  version: 3,
  name: "derived_matches",
  async up(db, { types }) {
    const offers = () => db.schema.alterTable("holder_offers");
    await offers().addColumn("matched_at", types.timestamp).execute();
    await offers().addColumn("match_seq", types.bigint).execute();
    await sql`update holder_offers set matched_at = created_at, match_seq = n.seq
      from (select id, row_number() over (order by created_at, id) as seq from holder_offers) as n
      where n.id = holder_offers.id`.execute(db);
    await db.schema
      .createIndex("holder_offers_arrivals")
      .on("holder_offers")
      .columns(["category", "country", "matched_at"])
      .execute();
    await db.schema
      .createIndex("holder_offers_region_arrivals")
      .on("holder_offers")
      .columns(["category", "country", "region", "matched_at"])
      .execute();
    await db.schema
      .createIndex("holder_offers_seq")
      .on("holder_offers")
      .column("match_seq")
      .unique()
      .execute();

    const intents = () => db.schema.alterTable("holder_intents");
    await intents().addColumn("matching_since", types.timestamp).execute();
    await intents().addColumn("mailed_at", types.timestamp).execute();
    await intents().addColumn("mailed_seq", types.bigint).execute();
    await intents().addColumn("ended_seq", types.bigint).execute();
    for (const column of ["scan_since", "scan_newest_at", "scan_newest_seq", "scan_to_at", "scan_to_seq"]) {
      await intents().addColumn(column, types.bigint).execute();
    }
    const upgradedAt = Date.now();
    await sql`update holder_intents set matching_since = confirmed_at,
        mailed_at = ${upgradedAt}, mailed_seq = (select coalesce(max(match_seq), 0) from holder_offers)
      where confirmed_at is not null`.execute(db);
    await sql`update holder_intents set ended_seq = (select coalesce(max(o.match_seq), 0)
        from holder_offers as o where o.matched_at <= holder_intents.ended_at)
      where status = 'withdrawn'`.execute(db);
    await db.schema.dropTable("holder_matches").execute();
  },
};

/**
 * Migration 4: the intents whose criteria took effect lately, found at the end of
 * an import without reading every active intent (matching/service.ts, catchUpSince).
 */
const recentlyMatching: Migration = {
  version: 4,
  name: "intents_matching_since",
  async up(db) {
    await db.schema
      .createIndex("holder_intents_matching_since")
      .on("holder_intents")
      .columns(["status", "matching_since"])
      .execute();
  },
};

/**
 * Migration 5 (the digest window): at most one digest per intent per window. A match
 * within the window marks the intent due; the minute timer finds the due ones through the index.
 * Existing intents have never been mailed under the window, so their next digest goes at once.
 */
const digestWindow: Migration = {
  version: 5,
  name: "intents_digest_window",
  async up(db, { types }) {
    const intents = () => db.schema.alterTable("holder_intents");
    await intents().addColumn("digested_at", types.timestamp).execute();
    await intents().addColumn("digest_due_at", types.timestamp).execute();
    await db.schema
      .createIndex("holder_intents_digest_due")
      .on("holder_intents")
      .column("digest_due_at")
      .execute();
  },
};

/** Later versions are appended here; a released version never changes. */
export const holderMigrations = defineMigrations("holder", [
  core,
  offerSearch,
  derivedMatches,
  recentlyMatching,
  digestWindow,
]);
