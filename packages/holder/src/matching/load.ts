import { sql } from "@doorbell/store";
import { IntentIndex } from "./intent-index.js";
import { type IntentFilterSource, intentFilter } from "./rule.js";
import { FILTER_COLUMNS, type MatchingState } from "./state.js";

/**
 * Loading the index: every active intent read from holder_intents, page by page, into a new index
 * that takes over when complete. Every operation but `onEnded` waits for the first load.
 */

async function load(state: MatchingState): Promise<{ activeIntents: number }> {
  const { store, pageSize } = state;
  state.endedDuringLoad = new Set();
  const next = new IntentIndex();
  next.beginBulk();
  let after = "";
  for (;;) {
    // Walk the primary key: on SQLite, `+status` keeps the planner off the status index, which
    // would sort every active intent again for each page.
    const status = store.dialect === "sqlite" ? sql<string>`+status` : sql<string>`status`;
    // Rows as arrays: an object per row was a quarter of a million-intent load on SQLite.
    const rows = await store.readArrays(
      store.db
        .selectFrom("holder_intents")
        .select(FILTER_COLUMNS)
        .where(status, "=", "active")
        .where("id", ">", after)
        .orderBy("id")
        .limit(pageSize)
        .compile(),
    );
    for (const row of rows) {
      const filter = intentFilter(sourceOf(row));
      if (filter) next.addNew(filter); // each id once: the walk is in key order
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < pageSize) break;
    after = last[at.id] as string;
  }
  next.endBulk();
  for (const id of state.endedDuringLoad) next.remove(id);
  state.endedDuringLoad = undefined;
  state.index = next;
  state.loaded = true;
  return { activeIntents: state.index.size };
}

/** Where each of FILTER_COLUMNS sits in a row read as an array. */
const at = Object.fromEntries(FILTER_COLUMNS.map((column, i) => [column, i])) as Record<
  (typeof FILTER_COLUMNS)[number],
  number
>;

/** A row of FILTER_COLUMNS read as an array. */
function sourceOf(row: unknown[]): IntentFilterSource {
  return {
    id: row[at.id],
    category: row[at.category],
    country: row[at.country],
    region: row[at.region],
    budget_amount: row[at.budget_amount],
    budget_currency: row[at.budget_currency],
    criteria_json: row[at.criteria_json],
    valid_until: row[at.valid_until],
  } as IntentFilterSource;
}

/** Starts (or joins) a load; a failed load is forgotten so the next call tries again. */
export function startLoad(state: MatchingState): Promise<{ activeIntents: number }> {
  const attempt = load(state).catch((error: unknown) => {
    state.endedDuringLoad = undefined;
    if (state.loading === attempt) state.loading = undefined;
    throw error;
  });
  state.loading = attempt;
  return attempt;
}

/** The first load, started by whichever operation needs the index first. */
export function ready(state: MatchingState): Promise<unknown> {
  return state.loading ?? startLoad(state);
}
