/** The intent an intentCode stands for (consent-link rules 2 and 4), remembered once consent is given. */
import type { HolderContext } from "../context.js";
import type { Principal } from "../model/types.js";
import { INTENT_CODE } from "./codes.js";
import { effectiveStatus, findByToken } from "./rows.js";

/** Consented intent codes remembered per process (keyed hashes only, never the codes). */
const CODE_CACHE_SIZE = 10_000;

/**
 * Once consent is given a code names its intent for good (rule 4: it can still read a withdrawn
 * or expired intent), so the keyed hash → id mapping is safe to keep; drafts are never cached
 * because their codes die with the draft. Bounded: the oldest entry goes first.
 */
export function codeResolver(ctx: HolderContext): (intentCode: string) => Promise<Principal | undefined> {
  const consentedCodes = new Map<string, string>();
  const remember = (key: string, intentId: string) => {
    if (consentedCodes.size >= CODE_CACHE_SIZE)
      consentedCodes.delete(consentedCodes.keys().next().value as string);
    consentedCodes.set(key, intentId);
  };
  return async function principalForCode(intentCode: string): Promise<Principal | undefined> {
    if (typeof intentCode !== "string") return undefined;
    const code = intentCode.trim();
    if (!INTENT_CODE.test(code)) return undefined;
    const key = ctx.codes.hash(code);
    const cached = consentedCodes.get(key);
    if (cached !== undefined) return { kind: "intent-code", intentId: cached };
    const found = await findByToken(ctx, "code_hash", code);
    if (found === undefined) return undefined;
    const { row } = found;
    // A draft that ended before anyone gave consent is gone for its code too (rule 1).
    if (row.consented_at === null && effectiveStatus(row, ctx.clock()) === "expired") return undefined;
    if (row.consented_at !== null) remember(key, row.id);
    return { kind: "intent-code", intentId: row.id };
  };
}
