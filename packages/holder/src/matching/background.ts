import { refresh } from "./activation.js";
import { ready, startLoad } from "./load.js";
import { CLOCK_SKEW_MS, errorCode, type MatchingState } from "./state.js";

/**
 * What this process may have missed, caught up in the background: intents another process
 * activated or changed without this one hearing of it (another process on SQLite, a missed
 * notification). Their matches written meanwhile are rung; failures are logged, never thrown.
 */

/** Rebuilds the index; the intents that joined it are refreshed, so what imports wrote meanwhile is rung. */
export async function reload(state: MatchingState): Promise<{ activeIntents: number }> {
  await ready(state);
  const before = state.index;
  const loaded = await startLoad(state);
  // Intents activated while notifications were missed: what imports wrote meanwhile is rung.
  const joined: string[] = [];
  for (const id of state.index.ids()) if (!before.has(id)) joined.push(id);
  for (const id of joined) await refresh(state, id).catch((error: unknown) => caughtUpFailed(state, error));
  return loaded;
}

/** The intents activated or changed since `startedAt`, less those this process followed. */
export async function catchUpSince(state: MatchingState, startedAt: number): Promise<void> {
  try {
    await ready(state);
    const rows = await state.store.db
      .selectFrom("holder_intents")
      .select(["id", "matching_since"])
      .where("status", "=", "active")
      .where("matching_since", ">=", startedAt - CLOCK_SKEW_MS)
      .execute();
    for (const { id, matching_since } of rows) {
      if (state.followed.get(id) !== Number(matching_since)) await refresh(state, id);
    }
  } catch (error) {
    caughtUpFailed(state, error);
  }
}

function caughtUpFailed(state: MatchingState, error: unknown): void {
  // The code only: the matches stay readable and the next catch-up or batch counts them.
  state.log.warn(
    { code: errorCode(error) },
    "ringing for matches not counted yet failed; the next import or activation counts them",
  );
}
