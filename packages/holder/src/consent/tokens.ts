/** The consent and manage links: their tokens, compared only as keyed hashes. */
import type { HolderContext } from "../context.js";
import { findByToken, type IntentRecord, PAGE_TOKEN, TAKEN_PREFIX } from "../intents/index.js";
import { HolderError } from "../model/types.js";

export const wellFormed = (token: unknown): token is string =>
  typeof token === "string" && PAGE_TOKEN.test(token);

export const goneMessage = (status: "expired" | "withdrawn") =>
  status === "withdrawn"
    ? "this intent was withdrawn; ask your assistant to publish a new one if you still want it"
    : "this intent expired before it was confirmed; ask your assistant to publish it again";

/** The draft a consent token names, live (bare hash) or already taken (prefixed hash). */
export async function findConsent(
  ctx: HolderContext,
  token: string,
): Promise<{ row: IntentRecord; taken: boolean; hash: string } | undefined> {
  const bare = ctx.codes.lookupHashes(token);
  const rows = await ctx.store.db
    .selectFrom("holder_intents")
    .selectAll()
    .where("consent_token_hash", "in", [...bare, ...bare.map((hash) => TAKEN_PREFIX + hash)])
    .execute();
  for (const row of rows) {
    const stored = row.consent_token_hash;
    if (stored === null) continue;
    const taken = stored.startsWith(TAKEN_PREFIX);
    if (ctx.codes.verify(token, taken ? stored.slice(TAKEN_PREFIX.length) : stored))
      return { row, taken, hash: stored };
  }
  return undefined;
}

export async function byManageToken(ctx: HolderContext, token: unknown): Promise<IntentRecord> {
  const found = wellFormed(token) ? await findByToken(ctx, "manage_token_hash", token) : undefined;
  if (found === undefined) {
    throw new HolderError(
      "ERR_HOLDER_NOT_FOUND",
      "this manage link is not valid; open it from one of the holder's e-mails",
    );
  }
  return found.row;
}
