/**
 * Intent records: the holder's intentCode, sealed under the agent's forwarder code, found by the
 * keyed hash of that code. The only place a holder code is stored or opened.
 */
import { isForwarderCode, mintForwarderCode, openUnderCode, randomBase62, sealUnderCode } from "./codes.js";
import type { ForwarderContext } from "./context.js";

export interface OpenedRecord {
  id: string;
  holderCode: string;
}

/** Stores the holder's code for a new forwarder code; returns the code for the agent. */
export async function createRecord(
  ctx: Pick<ForwarderContext, "store" | "hashers" | "clock">,
  holderCode: string,
): Promise<{ id: string; forwarderCode: string }> {
  const id = randomBase62("fwi_", 24);
  const forwarderCode = mintForwarderCode();
  await ctx.store.db
    .insertInto("forwarder_intents")
    .values({
      id,
      code_hash: ctx.hashers.codes.hash(forwarderCode),
      holder_code_sealed: sealUnderCode(holderCode, forwarderCode, id),
      created_at: ctx.clock(),
    })
    .execute();
  return { id, forwarderCode };
}

/** The record a forwarder code names, with the holder's code opened; undefined when none. */
export async function openRecord(
  ctx: Pick<ForwarderContext, "store" | "hashers">,
  forwarderCode: string,
): Promise<OpenedRecord | undefined> {
  if (!isForwarderCode(forwarderCode)) return undefined;
  const rows = await ctx.store.db
    .selectFrom("forwarder_intents")
    .select(["id", "code_hash", "holder_code_sealed"])
    .where("code_hash", "in", ctx.hashers.codes.lookupHashes(forwarderCode))
    .execute();
  for (const row of rows) {
    if (!ctx.hashers.codes.verify(forwarderCode, row.code_hash)) continue;
    const holderCode = openUnderCode(row.holder_code_sealed, forwarderCode, row.id);
    if (holderCode !== undefined) return { id: row.id, holderCode };
  }
  return undefined;
}

/** Forgets a record whose holder code the holder no longer knows (a draft nobody confirmed). */
export async function deleteRecord(ctx: Pick<ForwarderContext, "store">, id: string): Promise<void> {
  await ctx.store.db.deleteFrom("forwarder_intents").where("id", "=", id).execute();
}
