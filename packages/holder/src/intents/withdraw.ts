/** Ending an intent by withdrawal, from an agent or the manage page. */
import type { HolderContext } from "../context.js";
import { consentLanguage } from "../i18n/consent-texts.js";
import { withdrawnMail } from "../mail/templates.js";
import { lastArrival } from "../matching/reader.js";
import { SCOPE_MANAGE } from "../model/scopes.js";
import { HolderError, type Principal } from "../model/types.js";
import { authorize } from "./access.js";
import type { Intents } from "./context.js";
import { type IntentHooks, runHook, sendQuietly } from "./hooks.js";
import { effectiveStatus, type IntentRecord } from "./rows.js";
import { manageUrl, openContact } from "./sealed.js";

const iso = (ms: number): string => new Date(ms).toISOString();

export interface EndedIntent {
  row: IntentRecord;
  /** True when this call made the change (false: it had already ended). */
  changed: boolean;
}

/**
 * Withdraws intent `id` at once (binding: MUST take effect immediately) and idempotently. The
 * sealed contact is erased in the same transaction; a person with a verified channel gets the
 * withdrawn notice after commit, and `onEnded` runs if the intent had been active. An intent
 * that already expired stays expired (`changed` false, status expired).
 */
export async function withdrawIntent(
  ctx: HolderContext,
  hooks: IntentHooks,
  id: string,
): Promise<EndedIntent> {
  const now = ctx.clock();
  const result = await ctx.store.transaction(async (trx) => {
    const row = await trx.selectFrom("holder_intents").selectAll().where("id", "=", id).executeTakeFirst();
    if (row === undefined) throw new HolderError("ERR_HOLDER_NOT_FOUND", "there is no such intent");
    const status = effectiveStatus(row, now);
    if (status === "withdrawn" || status === "expired") {
      return { row: { ...row, status }, changed: false, wasActive: false, contact: undefined };
    }
    // Takes effect at once: no offer entering matching after this one reaches the intent.
    const { seq: endedSeq } = await lastArrival(trx, ctx.store.dialect);
    const withdrawn = {
      status: "withdrawn",
      ended_at: now,
      ended_seq: endedSeq,
      updated_at: now,
      contact_sealed: null,
      contact_hash: null,
    } as const;
    const updated = await trx
      .updateTable("holder_intents")
      .set(withdrawn)
      .where("id", "=", id)
      .where("status", "=", row.status)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) {
      throw new HolderError("ERR_HOLDER_CONFLICT", "the intent changed at the same time; try again");
    }
    // Only a verified channel gets the notice: an unconfirmed address is never mailed again.
    const contact =
      row.confirmed_at !== null && row.contact_sealed !== null
        ? openContact(ctx, id, row.contact_sealed)
        : undefined;
    const after: IntentRecord = { ...row, ...withdrawn };
    return { row: after, changed: true, wasActive: row.status === "active", contact };
  });
  if (result.changed) {
    ctx.log.info({ event: "intent.withdrawn", intentId: id }, "intent withdrawn");
    if (result.wasActive) await runHook(ctx, "onEnded", id, () => hooks.onEnded(id, "withdrawn"));
    if (result.contact !== undefined) {
      const mail = withdrawnMail({
        holderName: ctx.config.name,
        statement: result.row.statement,
        manageUrl: manageUrl(ctx, result.contact.manageToken),
        withdrawnAt: iso(now),
        lang: consentLanguage(ctx.config, result.row.consent_version),
      });
      await sendQuietly(ctx, { to: result.contact.email, ...mail }, "withdrawn_notice", id);
    }
  }
  return { row: result.row, changed: result.changed };
}

/** An agent (intentCode or signed-in client) withdraws: at once, or says the intent already expired. */
export async function withdraw(
  intents: Intents,
  principal: Principal,
  id?: string,
): Promise<{ status: "withdrawn" }> {
  const intentId = await authorize(intents, principal, id, SCOPE_MANAGE);
  const { row } = await withdrawIntent(intents.ctx, intents.hooks, intentId);
  if (row.status !== "withdrawn") {
    throw new HolderError(
      "ERR_HOLDER_GONE",
      "the intent has already expired; nothing more is delivered for it",
    );
  }
  return { status: "withdrawn" };
}
