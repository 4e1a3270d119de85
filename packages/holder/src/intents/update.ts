/** A signed-in client changes an intent; an intentCode cannot (consent-link rule 4). */
import { SCOPE_MANAGE } from "../model/scopes.js";
import type { IntentChanges } from "../model/services.js";
import { HolderError, type Intent, type Money, type Principal } from "../model/types.js";
import { authorize } from "./access.js";
import type { Intents } from "./context.js";
import { runHook } from "./hooks.js";
import { effectiveStatus, type IntentRecord, intentFromRow } from "./rows.js";
import { sealHiddenLimit } from "./sealed.js";
import {
  COUNTRY_CURRENCY,
  futureInstant,
  invalid,
  isRecord,
  onlyKeys,
  validateBudget,
  validateCriteria,
  validateHiddenLimit,
  validateStatement,
} from "./validate.js";

export async function update(
  intents: Intents,
  principal: Principal,
  id: string,
  changes: IntentChanges,
): Promise<Intent> {
  const { ctx, hooks } = intents;
  if (isRecord(principal) && principal.kind === "intent-code") {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      "an intentCode can read, list matches and withdraw, but not change an intent (consent-link rule 4); withdraw it and publish a new one",
    );
  }
  const intentId = await authorize(intents, principal, id, SCOPE_MANAGE);
  if (!isRecord(changes)) throw invalid("changes must be an object of the fields to change");
  if ("validUntil" in changes) {
    throw new HolderError(
      "ERR_HOLDER_FORBIDDEN",
      "renewing validUntil needs the person's own fresh action on the holder's page; an agent cannot renew an intent",
    );
  }
  onlyKeys(changes, ["statement", "criteria", "budget", "hiddenLimit", "buyBy"], "changes");
  if (Object.keys(changes).length === 0) throw invalid("no changes were given");
  const now = ctx.clock();
  const set: Partial<IntentRecord> = {};
  if (changes.statement !== undefined) set.statement = validateStatement(changes.statement);
  if (changes.criteria !== undefined) {
    const criteria = validateCriteria(changes.criteria, now);
    set.criteria_json = JSON.stringify(criteria);
    set.category = criteria.category;
  }
  let budget: Money | undefined;
  if (changes.budget !== undefined) {
    budget = validateBudget(changes.budget);
    set.budget_amount = budget.amount;
    set.budget_currency = budget.currency;
  }
  if (changes.buyBy !== undefined)
    set.buy_by = changes.buyBy === null ? null : futureInstant(changes.buyBy, "buyBy", now);
  const limit =
    changes.hiddenLimit === undefined || changes.hiddenLimit === null
      ? changes.hiddenLimit
      : validateHiddenLimit(changes.hiddenLimit);

  const row = await ctx.store.transaction(async (trx) => {
    const current = await trx
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intentId)
      .executeTakeFirst();
    if (current === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
    const status = effectiveStatus(current, now);
    if (status === "withdrawn" || status === "expired") {
      throw new HolderError("ERR_HOLDER_GONE", `the intent is ${status} and can no longer be changed`);
    }
    if (status === "awaiting_email_confirmation") {
      throw new HolderError(
        "ERR_HOLDER_CONFLICT",
        "the person is confirming this intent by e-mail; it cannot change until they have",
      );
    }
    const currency = budget?.currency ?? current.budget_currency ?? COUNTRY_CURRENCY[current.country];
    if (limit === null) set.hidden_limit_sealed = null;
    else if (limit !== undefined)
      set.hidden_limit_sealed = sealHiddenLimit(ctx, intentId, { amount: limit, currency });
    else if (
      budget !== undefined &&
      current.hidden_limit_sealed !== null &&
      budget.currency !== (current.budget_currency ?? COUNTRY_CURRENCY[current.country])
    ) {
      throw invalid(
        "changing the budget's currency needs a new hiddenLimit in that currency (or null to remove it)",
      );
    }
    // New criteria or budget: the offers that fit now are delivered again from this moment.
    const rematch = status === "active" && (set.criteria_json !== undefined || budget !== undefined);
    const next = { ...set, updated_at: now, ...(rematch ? { matching_since: now } : {}) };
    await trx.updateTable("holder_intents").set(next).where("id", "=", intentId).execute();
    return { ...current, ...next } as IntentRecord;
  });
  ctx.log.info({ event: "intent.updated", intentId, fields: Object.keys(changes) }, "intent updated");
  if (row.status === "active" && hooks.onChanged !== undefined) {
    const onChanged = hooks.onChanged;
    await runHook(ctx, "onChanged", intentId, () => onChanged(intentId));
  }
  return intentFromRow(row, now);
}
