import { type Database, sql } from "@doorbell/store";
import type { Logger } from "pino";
import type { MatchingService } from "../matching/service.js";

/** The PostgreSQL channel on which processes tell each other which intent changed. */
export const INTENT_CHANNEL = "doorbell_intents";

/**
 * One active-intent index across processes. Each process's index learns its own
 * activations, changes and ends from the intent service; this feed tells the other processes on
 * the same PostgreSQL database, which bring that one intent up to date from the database and ring
 * only for what their own imports wrote before they heard (`refresh`: doorbells count each match
 * once, whichever process counts it). After the listening connection was lost, the whole index is
 * reloaded, since notifications may have been missed, and the intents it did not have are caught
 * up the same way. On SQLite (one process) it does nothing; an import's end catches up there.
 *
 * It wraps `matching.onActivated` and `matching.onEnded`, which the intent hooks call after their
 * commit; the notification goes out after that commit too.
 */
export interface IntentFeed {
  stop(): Promise<void>;
}

export async function startIntentFeed(options: {
  store: Database;
  matching: MatchingService;
  log: Logger;
}): Promise<IntentFeed> {
  const { store, matching, log } = options;
  if (store.dialect !== "postgres") return { stop: async () => {} };

  const publish = (intentId: string) =>
    sql`select pg_notify(${INTENT_CHANNEL}, ${intentId})`.execute(store.db).then(
      () => {},
      (error: Error) =>
        log.warn({ event: "intents.feed_failed", error: error.name }, "telling other processes failed"),
    );
  const activated = matching.onActivated.bind(matching);
  const ended = matching.onEnded.bind(matching);
  matching.onActivated = async (intentId) => {
    try {
      return await activated(intentId);
    } finally {
      await publish(intentId);
    }
  };
  matching.onEnded = (intentId) => {
    ended(intentId);
    void publish(intentId);
  };

  const failed = (error: Error) =>
    log.warn(
      { event: "intents.refresh_failed", error: error.name },
      "following another process's intent failed",
    );
  const stop = await store.listen(INTENT_CHANNEL, (intentId) => {
    // Our own notifications come back too: refreshing from the database is harmless.
    if (intentId === undefined) matching.reload().catch(failed);
    else matching.refresh(intentId).catch(failed);
  });
  return {
    async stop() {
      matching.onActivated = activated;
      matching.onEnded = ended;
      await stop();
    },
  };
}
