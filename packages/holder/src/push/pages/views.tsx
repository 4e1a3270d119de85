/**
 * What the person sees of the push profile (§6 rule 3, open question 5): who would be notified,
 * what they learn, a separate unticked choice on the consent page, the approval page behind the
 * mailed link, and on the manage page when the assistant was last notified and whether it still
 * listens, with one button to stop it.
 */
import { STATEMENT_MAX } from "@doorbell/intents";
import type { FC } from "hono/jsx";
import { formatDateTime, isoDateTime } from "../../html/format.js";
import { Layout } from "../../html/layout.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";
import { quoteName, quoteText } from "../../model/quoting.js";
import type { AssistantAccess } from "../../oauth/owners.js";
import type { NotificationReceipt } from "../service.js";

/** The form field of one consent-page choice. */
export const consentChoiceField = (subscriptionId: string): string => `notify_${subscriptionId}`;

/** The hosts are the assistant's choice: shown quoted, never as something to open. */
const Who: FC<{ receipt: NotificationReceipt; lang: Lang }> = ({ receipt, lang }) =>
  receipt.relayFor === undefined ? (
    <strong>{quoteName(receipt.deliveryHost)}</strong>
  ) : (
    <>
      <strong>{quoteName(receipt.relayFor)}</strong>
      {messagesFor(lang).notifications.relayedThrough}
      <strong>{quoteName(receipt.deliveryHost)}</strong>
    </>
  );

/** "allowed", or "stopped (you stopped it)". */
function statusText(receipt: NotificationReceipt, lang: Lang): string {
  const t = messagesFor(lang).notifications;
  const status = t.status[receipt.status] ?? receipt.status;
  if (receipt.status !== "ended" || receipt.endedReason === undefined) return status;
  return `${status} (${t.ended[receipt.endedReason] ?? receipt.endedReason})`;
}

/** Consent page: one unticked checkbox per subscription made while the request awaited consent. */
export const NotificationChoices: FC<{ choices: readonly NotificationReceipt[]; lang?: Lang }> = ({
  choices,
  lang = DEFAULT_LANG,
}) => {
  const t = messagesFor(lang).notifications;
  return choices.length === 0 ? null : (
    <fieldset class="field">
      <legend>{t.choicesLegend}</legend>
      <p class="hint">
        {t.promise} {t.leaveEmpty}
      </p>
      {choices.map((choice) => (
        <div class="check">
          <input
            type="checkbox"
            id={consentChoiceField(choice.id)}
            name={consentChoiceField(choice.id)}
            value="yes"
          />
          <label for={consentChoiceField(choice.id)}>
            {t.alsoNotify.before}
            <Who receipt={choice} lang={lang} />
            {t.alsoNotify.after}
          </label>
        </div>
      ))}
    </fieldset>
  );
};

const When: FC<{ value: number; lang: Lang }> = ({ value, lang }) => (
  <time datetime={isoDateTime(value)}>{formatDateTime(value, lang)}</time>
);

/** Manage page: every subscription, its receipts and one button each. */
export const NotificationReceipts: FC<{
  receipts: readonly NotificationReceipt[];
  actionFor: (receipt: NotificationReceipt, action: "allow" | "stop") => string;
  csrf: string;
  lang?: Lang;
}> = ({ receipts, actionFor, csrf, lang = DEFAULT_LANG }) => {
  const t = messagesFor(lang).notifications;
  return receipts.length === 0 ? null : (
    <>
      <h2 id="notifications">{t.receiptsTitle}</h2>
      <p class="muted">{t.promise}</p>
      <ul aria-labelledby="notifications">
        {receipts.map((receipt) => (
          <li>
            <p>
              <Who receipt={receipt} lang={lang} />: {statusText(receipt, lang)}.
            </p>
            <p class="muted">
              {receipt.lastNotifiedAt === null ? (
                t.notYet
              ) : (
                <>
                  {t.lastNotified}
                  <When value={receipt.lastNotifiedAt} lang={lang} />.
                </>
              )}{" "}
              {receipt.status === "ended" ? "" : receipt.listening ? t.listening : t.notListening}
            </p>
            {receipt.disabledAt !== undefined && (
              <p class="muted">
                {t.disabled.before}
                <When value={receipt.disabledAt} lang={lang} />
                {t.disabled.after}
              </p>
            )}
            {receipt.status === "awaiting_person_approval" &&
              receipt.approval === "sent-to-verified-channel" && (
                <form method="post" action={actionFor(receipt, "allow")}>
                  <input type="hidden" name="csrf" value={csrf} />
                  <button type="submit">{t.allow}</button>
                </form>
              )}
            {receipt.status !== "ended" && (
              <form method="post" action={actionFor(receipt, "stop")}>
                <input type="hidden" name="csrf" value={csrf} />
                <button type="submit" class="danger">
                  {t.stop}
                </button>
              </form>
            )}
          </li>
        ))}
      </ul>
    </>
  );
};

/**
 * The page behind the approval link of the e-mail: GET shows, the buttons POST. Before anything
 * else it names the host that would be notified and what the assistant learns (and never learns).
 */
export const NotificationApprovalPage: FC<{
  holderName: string;
  statement: string;
  receipt: NotificationReceipt;
  allowAction: string;
  stopAction: string;
  csrf: string;
  done?: "allowed" | "stopped";
  lang?: Lang;
  langSwitch?: boolean;
}> = (props) => {
  const { receipt, lang = DEFAULT_LANG } = props;
  const t = messagesFor(lang).notifications;
  return (
    <Layout title={t.approvalTitle} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.approvalTitle}</h1>
      {props.done !== undefined && (
        <p class="notice" role="status">
          {props.done === "allowed" ? t.allowed : t.stopped}
        </p>
      )}
      <p>
        {t.asked.before(props.holderName)}
        <Who receipt={receipt} lang={lang} />
        {t.asked.after}
      </p>
      <blockquote>{quoteText(props.statement, STATEMENT_MAX)}</blockquote>
      <dl class="facts">
        <dt>{t.whoTitle}</dt>
        <dd>
          <Who receipt={receipt} lang={lang} />
          <br />
          <span class="muted">{t.whoExplain}</span>
        </dd>
        <dt>{t.learnsTitle}</dt>
        <dd>
          <ul>
            {t.learns.map((line) => (
              <li>{line}</li>
            ))}
          </ul>
          {t.learnsAfter}
        </dd>
      </dl>
      <p>{t.promise}</p>
      <p>
        {t.statusPrefix} {statusText(receipt, lang)}.
      </p>
      {receipt.status !== "ended" &&
        receipt.approval !== "granted" &&
        receipt.approval !== "not-required" && (
          <>
            <p>{t.nothingUntil}</p>
            <form method="post" action={props.allowAction}>
              <input type="hidden" name="csrf" value={props.csrf} />
              <button type="submit">{t.allow}</button>
            </form>
          </>
        )}
      {receipt.status !== "ended" && (
        <form method="post" action={props.stopAction}>
          <input type="hidden" name="csrf" value={props.csrf} />
          <button type="submit" class="danger">
            {t.stop}
          </button>
        </form>
      )}
    </Layout>
  );
};

/** Manage page (OAuth): the assistants this person let in, each revoked in one action. */
export const AssistantsWithAccess: FC<{
  assistants: readonly AssistantAccess[];
  actionFor: (assistant: AssistantAccess) => string;
  csrf: string;
  lang?: Lang;
}> = ({ assistants, actionFor, csrf, lang = DEFAULT_LANG }) => {
  const t = messagesFor(lang).assistants;
  return assistants.length === 0 ? null : (
    <>
      <h2 id="assistants">{t.title}</h2>
      <ul aria-labelledby="assistants">
        {assistants.map((assistant) => (
          <li>
            <p>
              <strong>{quoteName(assistant.clientName)}</strong>
              {t.signsInAt(assistant.redirectHosts.map((host) => quoteName(host)).join(", "))}
              {assistant.scopes.map((scope) => t.scopes[scope] ?? scope).join(t.and)}.
            </p>
            <form method="post" action={actionFor(assistant)}>
              <input type="hidden" name="csrf" value={csrf} />
              <button type="submit" class="danger">
                {t.revoke}
              </button>
            </form>
          </li>
        ))}
      </ul>
    </>
  );
};
