/**
 * The person's approval (§6 rule 3) through the verified channel: the mailed link, its page, and
 * allowing a subscription from that page or the manage page.
 */

import type { SubscriptionView } from "@doorbell/delivery";
import { consentLanguage } from "../i18n/consent-texts.js";
import {
  effectiveStatus,
  manageUrl,
  newPageToken,
  openContact,
  PAGE_TOKEN,
  sendQuietly,
} from "../intents/index.js";
import { notificationApprovalMail } from "../mail/templates.js";
import { HolderError } from "../model/types.js";
import { emit, type Push } from "./context.js";
import { grant, holdArrivals } from "./grant.js";
import { engineView, enqueueStatus, ownRow } from "./rows.js";
import type { PushRow } from "./schema.js";
import type { NotificationReceipt } from "./types.js";
import { hostsOf, receipt } from "./views.js";

/** Mails the approval link once per subscription, to a confirmed intent's verified address. */
export async function mailApproval(push: Push, intentId: string, subscriptionId: string): Promise<void> {
  const { ctx, store } = push;
  const intent = await store.db
    .selectFrom("holder_intents")
    .selectAll()
    .where("id", "=", intentId)
    .executeTakeFirst();
  if (intent === undefined || intent.confirmed_at === null || intent.contact_sealed === null) return;
  const row = await ownRow(store.db, intentId, subscriptionId);
  const token = newPageToken();
  const claimed = await store.db
    .updateTable("holder_push")
    .set({ approval_token_hash: ctx.codes.hash(token), approval_sent_at: ctx.clock() })
    .where("id", "=", subscriptionId)
    .where("approval_sent_at", "is", null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return;
  const contact = openContact(ctx, intentId, intent.contact_sealed);
  const hosts = hostsOf(ctx, row);
  const mail = notificationApprovalMail({
    holderName: ctx.config.name,
    statement: intent.statement,
    manageUrl: manageUrl(ctx, contact.manageToken),
    approveUrl: `${ctx.config.publicUrl}/notifications/${token}`,
    deliveryHost: hosts.deliveryHost,
    ...(hosts.relayFor === undefined ? {} : { relayFor: hosts.relayFor }),
    lang: consentLanguage(ctx.config, intent.consent_version),
  });
  await sendQuietly(ctx, { to: contact.email, ...mail }, "notification_approval", intentId);
}

async function byApprovalToken(push: Push, token: string): Promise<{ row: PushRow; sub: SubscriptionView }> {
  const { ctx, store } = push;
  const notValid = () =>
    new HolderError(
      "ERR_HOLDER_NOT_FOUND",
      "this approval link is not valid; open it from the holder's e-mail",
    );
  if (typeof token !== "string" || !PAGE_TOKEN.test(token)) throw notValid();
  const rows = await store.db
    .selectFrom("holder_push")
    .selectAll()
    .where("approval_token_hash", "in", ctx.codes.lookupHashes(token))
    .execute();
  const row = rows.find((candidate) =>
    candidate.approval_token_hash !== null ? ctx.codes.verify(token, candidate.approval_token_hash) : false,
  );
  const sub = row === undefined ? undefined : await engineView(push, store.db, row.id);
  if (row === undefined || sub === undefined) throw notValid();
  return { row, sub };
}

export async function approvalView(
  push: Push,
  token: string,
): Promise<{ intentId: string; statement: string; receipt: NotificationReceipt }> {
  const { row, sub } = await byApprovalToken(push, token);
  const intent = await push.store.db
    .selectFrom("holder_intents")
    .select("statement")
    .where("id", "=", row.intent_id)
    .executeTakeFirstOrThrow();
  return { intentId: row.intent_id, statement: intent.statement, receipt: receipt(push.ctx, row, sub) };
}

export async function approveByToken(push: Push, token: string): Promise<NotificationReceipt> {
  const { row } = await byApprovalToken(push, token);
  return approve(push, row.intent_id, row.id);
}

export async function approve(
  push: Push,
  intentId: string,
  subscriptionId: string,
): Promise<NotificationReceipt> {
  const { ctx } = push;
  const result = await push.store.transaction(async (trx) => {
    await holdArrivals(push, trx);
    const intent = await trx
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intentId)
      .executeTakeFirst();
    if (intent === undefined || effectiveStatus(intent, ctx.clock()) !== "active") {
      throw new HolderError(
        "ERR_HOLDER_GONE",
        "notifications can be allowed only while the intent is active",
      );
    }
    const row = await ownRow(trx, intentId, subscriptionId);
    const current = await engineView(push, trx, row.id);
    if (current === undefined || current.status === "ended") {
      throw new HolderError("ERR_HOLDER_GONE", "this subscription has ended; the assistant has to ask again");
    }
    if (row.approval === "granted" || row.approval === "not-required") return receipt(ctx, row, current);
    const sub = await grant(push, trx, row);
    // The agent's first doorbell: it is on, and the intent is active (sent once its challenge passed).
    await enqueueStatus(push, trx, row, "active");
    return receipt(ctx, { ...row, approval: "granted" }, sub);
  });
  ctx.log.info({ event: "push.approved", intentId, subscriptionId }, "notifications allowed by the person");
  emit(push, [subscriptionId]);
  return result;
}
