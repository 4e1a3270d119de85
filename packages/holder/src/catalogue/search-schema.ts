import { REGIONS } from "@doorbell/intents";
import { type Kysely, type Migration, sql } from "@doorbell/store";
import { fold } from "../matching/rule.js";

/**
 * Holder migration 2: full-text search over offers, kept in sync by the database itself (triggers),
 * so every writer of holder_offers — the offer service, a test, an operator's script — keeps the
 * index right.
 *
 * What is indexed: the title (weighted higher), the description, the attribute values (so
 * "octavia", "diesel" or "flat" find offers) and the region's name and seat (so "Košice" finds the
 * offers in SK-KI whatever their title says). Matching ignores case and accents on both engines:
 * "skoda" finds "Škoda".
 *
 * - SQLite: an FTS5 table (`unicode61 remove_diacritics 2`). Its rowids come from
 *   holder_offer_search_keys (an INTEGER PRIMARY KEY), never from holder_offers' implicit rowid,
 *   which VACUUM may renumber.
 * - PostgreSQL: a tsvector per offer in holder_offer_search with a GIN index, built with the
 *   `simple` configuration over text folded by holder_fold (lower case, accents of Latin letters
 *   removed with translate(), so it needs no extension).
 */

/** The region terms indexed beside an offer: its name and its seat. */
function regionTerms(): { code: string; terms: string }[] {
  return REGIONS.map((region) => ({
    code: region.code,
    terms: `${region.name} ${region.towns[0] ?? ""}`.trim(),
  }));
}

/**
 * translate() arguments that fold Latin-1 and Latin Extended-A/B letters the way `fold` does in
 * JavaScript (NFD, marks removed, lower case), one character to one character.
 */
export function foldTable(): { from: string; to: string } {
  let from = "";
  let to = "";
  for (let cp = 0x41; cp <= 0x24f; cp++) {
    const ch = String.fromCodePoint(cp);
    if (!/\p{L}/u.test(ch)) continue;
    const folded = fold(ch);
    if (folded !== ch && [...folded].length === 1) {
      from += ch;
      to += folded;
    }
  }
  return { from, to };
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  await sql`create table holder_offer_search_keys (
    search_id integer primary key autoincrement,
    offer_id text not null unique
  )`.execute(db);
  await sql`create virtual table holder_offer_search using fts5(
    title, body, tokenize = 'unicode61 remove_diacritics 2'
  )`.execute(db);
  const body = (row: string) =>
    sql.raw(`coalesce(${row}.description, '')
      || ' ' || coalesce((select group_concat(value, ' ') from json_each(${row}.attributes_json)), '')
      || ' ' || coalesce((select terms from holder_regions where code = ${row}.region), '')`);
  await sql`create trigger holder_offers_search_insert after insert on holder_offers begin
    insert into holder_offer_search_keys (offer_id) values (new.id);
    insert into holder_offer_search (rowid, title, body) values (
      (select search_id from holder_offer_search_keys where offer_id = new.id), new.title, ${body("new")});
  end`.execute(db);
  await sql`create trigger holder_offers_search_update
    after update of title, description, attributes_json, region on holder_offers begin
    delete from holder_offer_search
      where rowid = (select search_id from holder_offer_search_keys where offer_id = old.id);
    insert or ignore into holder_offer_search_keys (offer_id) values (new.id);
    insert into holder_offer_search (rowid, title, body) values (
      (select search_id from holder_offer_search_keys where offer_id = new.id), new.title, ${body("new")});
  end`.execute(db);
  await sql`create trigger holder_offers_search_delete after delete on holder_offers begin
    delete from holder_offer_search
      where rowid = (select search_id from holder_offer_search_keys where offer_id = old.id);
    delete from holder_offer_search_keys where offer_id = old.id;
  end`.execute(db);
  // Offers stored before this migration.
  await sql`insert into holder_offer_search_keys (offer_id) select id from holder_offers order by created_at, id`.execute(
    db,
  );
  await sql`insert into holder_offer_search (rowid, title, body)
    select k.search_id, o.title, ${body("o")}
    from holder_offers o join holder_offer_search_keys k on k.offer_id = o.id`.execute(db);
}

async function upPostgres(db: Kysely<unknown>): Promise<void> {
  const { from, to } = foldTable();
  // The table is built from letters only, so it can sit in the function body as a literal.
  if (!/^\p{L}*$/u.test(from + to)) throw new Error("the fold table must hold letters only");
  await sql
    .raw(
      `create function holder_fold(t text) returns text language sql immutable parallel safe
       as $$ select translate(lower(t), '${from}', '${to}') $$`,
    )
    .execute(db);
  await sql`create table holder_offer_search (
    offer_id text primary key references holder_offers(id) on delete cascade,
    doc tsvector not null
  )`.execute(db);
  await sql`create index holder_offer_search_doc on holder_offer_search using gin (doc)`.execute(db);
  await sql`create function holder_offer_search_document(o holder_offers) returns tsvector language sql stable
    as $$ select
      setweight(to_tsvector('simple', holder_fold(o.title)), 'A') ||
      to_tsvector('simple', holder_fold(coalesce(o.description, '')
        || ' ' || coalesce((select string_agg(value, ' ') from jsonb_each_text(o.attributes_json::jsonb)), '')
        || ' ' || coalesce((select terms from holder_regions where code = o.region), ''))) $$`.execute(db);
  await sql`create function holder_offer_search_sync() returns trigger language plpgsql as $$
    begin
      insert into holder_offer_search (offer_id, doc) values (new.id, holder_offer_search_document(new))
        on conflict (offer_id) do update set doc = excluded.doc;
      return null;
    end $$`.execute(db);
  await sql`create trigger holder_offers_search
    after insert or update of title, description, attributes_json, region on holder_offers
    for each row execute function holder_offer_search_sync()`.execute(db);
  await sql`insert into holder_offer_search (offer_id, doc)
    select o.id, holder_offer_search_document(o) from holder_offers o`.execute(db);
}

export const offerSearch: Migration = {
  version: 2,
  name: "offer_search",
  async up(db, { dialect }) {
    await sql`create table holder_regions (code text primary key, terms text not null)`.execute(db);
    for (const { code, terms } of regionTerms()) {
      await sql`insert into holder_regions (code, terms) values (${code}, ${terms})`.execute(db);
    }
    if (dialect === "sqlite") await upSqlite(db);
    else await upPostgres(db);
  },
};
