/** An intent's row and what tools and pages see of it; finding a row by a token's keyed hash. */
import type { Selectable, Transaction } from "@doorbell/store";
import type { HolderContext } from "../context.js";
import type { HolderTables, IntentRow } from "../model/tables.js";
import { type Area, type Criteria, HolderError, type Intent, type IntentStatus } from "../model/types.js";
import { newPseudonym } from "./codes.js";
import { sealHiddenLimit } from "./sealed.js";
import type { ValidPublish } from "./validate.js";

export type IntentRecord = Selectable<IntentRow>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** An intent's row by id; ERR_HOLDER_NOT_FOUND when there is none. */
export async function loadIntentRow(ctx: HolderContext, id: string): Promise<IntentRecord> {
  const row = await ctx.store.db
    .selectFrom("holder_intents")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirst();
  if (row === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
  return row;
}

/** The status as of `now`: a draft, confirmation or intent past its end reads as expired before `expireDue` runs. */
export function effectiveStatus(row: IntentRecord, now: number): IntentStatus {
  switch (row.status) {
    case "awaiting_consent":
      return row.draft_expires_at !== null && row.draft_expires_at <= now ? "expired" : row.status;
    case "awaiting_email_confirmation":
      return row.confirm_expires_at !== null && row.confirm_expires_at <= now ? "expired" : row.status;
    case "active":
      return row.valid_until <= now ? "expired" : row.status;
    default:
      return row.status;
  }
}

/** What a tool or page may show: never the contact, the hidden limit (only whether one is set) or a token. */
export function intentFromRow(row: IntentRecord, now: number): Intent {
  const status = effectiveStatus(row, now);
  const area: Area = { country: row.country };
  if (row.region !== null) area.region = row.region;
  const intent: Intent = {
    id: row.id,
    status,
    statement: row.statement,
    area,
    hasHiddenLimit: row.hidden_limit_sealed !== null,
    validUntil: iso(row.valid_until),
    visibility: row.visibility,
    createdAt: iso(row.created_at),
  };
  if (row.criteria_json !== null) intent.criteria = JSON.parse(row.criteria_json) as Criteria;
  if (row.budget_amount !== null && row.budget_currency !== null) {
    intent.budget = { amount: row.budget_amount, currency: row.budget_currency };
  }
  if (row.buy_by !== null) intent.buyBy = iso(row.buy_by);
  if (status === "awaiting_consent" && row.draft_expires_at !== null)
    intent.draftExpiresAt = iso(row.draft_expires_at);
  return intent;
}

type HashColumn = "code_hash" | "consent_token_hash" | "confirm_token_hash" | "manage_token_hash";

/**
 * The row whose `column` holds the keyed hash of `token` (one candidate per key in the keyring),
 * confirmed with a constant-time compare. The index finds the row; the token is never compared
 * in clear.
 */
export async function findByToken(
  ctx: HolderContext,
  column: HashColumn,
  token: string,
  trx?: Transaction<HolderTables>,
): Promise<{ row: IntentRecord; hash: string } | undefined> {
  const candidates = ctx.codes.lookupHashes(token);
  const rows = await (trx ?? ctx.store.db)
    .selectFrom("holder_intents")
    .selectAll()
    .where(column, "in", candidates)
    .execute();
  for (const row of rows) {
    const stored = row[column];
    if (stored !== null && ctx.codes.verify(token, stored)) return { row, hash: stored };
  }
  return undefined;
}

/** The columns a published intent takes from what the agent sent, the hidden limit sealed. */
export function publishedColumns(ctx: Pick<HolderContext, "sealer">, id: string, valid: ValidPublish) {
  return {
    statement: valid.statement,
    criteria_json: valid.criteria === undefined ? null : JSON.stringify(valid.criteria),
    category: valid.criteria?.category ?? null,
    country: valid.area.country,
    region: valid.area.region ?? null,
    budget_amount: valid.budget?.amount ?? null,
    budget_currency: valid.budget?.currency ?? null,
    hidden_limit_sealed: valid.hiddenLimit === undefined ? null : sealHiddenLimit(ctx, id, valid.hiddenLimit),
    buy_by: valid.buyBy ?? null,
    valid_until: valid.validUntil,
    visibility: valid.visibility,
    pseudonym: valid.visibility === "pseudonymous" ? newPseudonym() : null,
  };
}
