/**
 * The person's approval (push profile §6 rule 3), in the engine and on the holder's row. Matches
 * that arrived while the subscription waited were never queued for it (only what the person
 * allowed hears of matches), so they are rung now, in the same transaction.
 */
import type { SubscriptionView } from "@doorbell/delivery";
import { asTables } from "@doorbell/store";
import { lastArrival } from "../matching/reader.js";
import type { HolderTables } from "../model/tables.js";
import { HolderError } from "../model/types.js";
import { engineDb, type Push, type PushDb } from "./context.js";
import { catchUpSubscription } from "./enqueue-matches.js";
import { engineCall } from "./rows.js";
import type { PushRow } from "./schema.js";

/**
 * Takes the arrivals lock, first in a transaction that may grant: counting matches for a
 * subscription needs it, and taking it before any other write keeps the order imports use.
 */
export async function holdArrivals(push: Push, db: PushDb): Promise<void> {
  await lastArrival(asTables<HolderTables>(db), push.ctx.store.dialect);
}

/** The caller holds the arrivals lock (`holdArrivals`). */
export async function grant(push: Push, db: PushDb, row: PushRow): Promise<SubscriptionView> {
  // Rule 9: a test call's subscription needs no person and never becomes a real one.
  if (row.test !== 0) {
    throw new HolderError(
      "ERR_HOLDER_CONFLICT",
      "a test subscription cannot be allowed; the assistant has to subscribe without x-isto-test",
    );
  }
  const sub = await engineCall(() => push.engine.approve(engineDb(db), row.id));
  await db.updateTable("holder_push").set({ approval: "granted" }).where("id", "=", row.id).execute();
  await catchUpSubscription(push, db, row.id);
  return sub;
}
