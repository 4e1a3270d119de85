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
    const rows: IntentFilterSource[] = await store.db
      .selectFrom("holder_intents")
      .select(FILTER_COLUMNS)
      .where(status, "=", "active")
      .where("id", ">", after)
      .orderBy("id")
      .limit(pageSize)
      .execute();
    for (const row of rows) {
      const filter = intentFilter(row);
      if (filter) next.addNew(filter); // each id once: the walk is in key order
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < pageSize) break;
    after = last.id;
  }
  next.endBulk();
  for (const id of state.endedDuringLoad) next.remove(id);
  state.endedDuringLoad = undefined;
  state.index = next;
  state.loaded = true;
  return { activeIntents: state.index.size };
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
