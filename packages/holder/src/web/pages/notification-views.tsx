/**
 * What the person sees of the push profile (§6 rule 3, open question 5): who would be notified,
 * what they learn, a separate unticked choice on the consent page, the approval page behind the
 * mailed link, and on the manage page when the assistant was last notified and whether it still
 * listens, with one button to stop it.
 */
import type { FC } from "hono/jsx";
import { NOTIFICATION_PROMISE } from "../../mail/templates.js";
import type { AssistantAccess } from "../../oauth/owners.js";
import type { NotificationReceipt } from "../../push/service.js";
import { formatDateTime, isoDateTime } from "./format.js";
import { Layout } from "./layout.js";

/** The form field of one consent-page choice. */
export const consentChoiceField = (subscriptionId: string): string => `notify_${subscriptionId}`;

const Who: FC<{ receipt: NotificationReceipt }> = ({ receipt }) =>
  receipt.relayFor === undefined ? (
    <strong>{receipt.deliveryHost}</strong>
  ) : (
    <>
      <strong>{receipt.relayFor}</strong>, relayed through <strong>{receipt.deliveryHost}</strong>
    </>
  );

const STATUS_TEXT: Record<NotificationReceipt["status"], string> = {
  awaiting_verification: "waiting for the assistant's endpoint to answer our check",
  awaiting_person_approval: "waiting for you to allow it",
  active: "allowed",
  ended: "stopped",
};

const ENDED_TEXT: Record<string, string> = {
  "approval-withdrawn": "you stopped it",
  unsubscribed: "the assistant stopped it",
  "delivery-failed": "the assistant's endpoint stopped answering",
  gone: "the assistant's endpoint said it is gone",
  "lease-expired": "the assistant did not renew it",
  "verification-failed": "the assistant's endpoint did not answer our check",
  "intent-withdrawn": "the request was withdrawn",
  "intent-expired": "the request ended",
};

/** Consent page: one unticked checkbox per subscription made while the request awaited consent. */
export const NotificationChoices: FC<{ choices: readonly NotificationReceipt[] }> = ({ choices }) =>
  choices.length === 0 ? null : (
    <fieldset class="field">
      <legend>Notifications for the assistant (optional)</legend>
      <p class="hint">{NOTIFICATION_PROMISE} Leave a box empty to say no.</p>
      {choices.map((choice) => (
        <div class="check">
          <input
            type="checkbox"
            id={consentChoiceField(choice.id)}
            name={consentChoiceField(choice.id)}
            value="yes"
          />
          <label for={consentChoiceField(choice.id)}>
            Also notify <Who receipt={choice} /> when there are new offers or the status changes.
          </label>
        </div>
      ))}
    </fieldset>
  );

const When: FC<{ value: number }> = ({ value }) => (
  <time datetime={isoDateTime(value)}>{formatDateTime(value)}</time>
);

/** Manage page: every subscription, its receipts and one button each. */
export const NotificationReceipts: FC<{
  receipts: readonly NotificationReceipt[];
  actionFor: (receipt: NotificationReceipt, action: "allow" | "stop") => string;
  csrf: string;
}> = ({ receipts, actionFor, csrf }) =>
  receipts.length === 0 ? null : (
    <>
      <h2 id="notifications">Assistants notified about this request</h2>
      <p class="muted">{NOTIFICATION_PROMISE}</p>
      <ul aria-labelledby="notifications">
        {receipts.map((receipt) => (
          <li>
            <p>
              <Who receipt={receipt} />: {STATUS_TEXT[receipt.status]}
              {receipt.status === "ended" && receipt.endedReason !== undefined
                ? ` (${ENDED_TEXT[receipt.endedReason] ?? receipt.endedReason})`
                : ""}
              .
            </p>
            <p class="muted">
              {receipt.lastNotifiedAt === null ? (
                "Not notified yet."
              ) : (
                <>
                  Last notified <When value={receipt.lastNotifiedAt} />.
                </>
              )}{" "}
              {receipt.status === "ended"
                ? ""
                : receipt.listening
                  ? "Still listening."
                  : "Not listening at the moment."}
            </p>
            {receipt.status === "awaiting_person_approval" &&
              receipt.approval === "sent-to-verified-channel" && (
                <form method="post" action={actionFor(receipt, "allow")}>
                  <input type="hidden" name="csrf" value={csrf} />
                  <button type="submit">Allow these notifications</button>
                </form>
              )}
            {receipt.status !== "ended" && (
              <form method="post" action={actionFor(receipt, "stop")}>
                <input type="hidden" name="csrf" value={csrf} />
                <button type="submit" class="danger">
                  Stop these notifications
                </button>
              </form>
            )}
          </li>
        ))}
      </ul>
    </>
  );

/** The page behind the approval link of the e-mail: GET shows, the buttons POST. */
export const NotificationApprovalPage: FC<{
  holderName: string;
  statement: string;
  receipt: NotificationReceipt;
  allowAction: string;
  stopAction: string;
  csrf: string;
  done?: "allowed" | "stopped";
}> = (props) => {
  const { receipt } = props;
  return (
    <Layout title="Notifications for an assistant" holderName={props.holderName}>
      <h1>Notifications for an assistant</h1>
      {props.done !== undefined && (
        <p class="notice" role="status">
          {props.done === "allowed" ? "Done: notifications are allowed." : "Done: notifications are stopped."}
        </p>
      )}
      <p>
        An assistant asked {props.holderName} to notify <Who receipt={receipt} /> about this request:
      </p>
      <blockquote>{props.statement}</blockquote>
      <p>{NOTIFICATION_PROMISE}</p>
      <p>
        Status: {STATUS_TEXT[receipt.status]}
        {receipt.status === "ended" && receipt.endedReason !== undefined
          ? ` (${ENDED_TEXT[receipt.endedReason] ?? receipt.endedReason})`
          : ""}
        .
      </p>
      {receipt.status !== "ended" &&
        receipt.approval !== "granted" &&
        receipt.approval !== "not-required" && (
          <form method="post" action={props.allowAction}>
            <input type="hidden" name="csrf" value={props.csrf} />
            <button type="submit">Allow these notifications</button>
          </form>
        )}
      {receipt.status !== "ended" && (
        <form method="post" action={props.stopAction}>
          <input type="hidden" name="csrf" value={props.csrf} />
          <button type="submit" class="danger">
            Stop these notifications
          </button>
        </form>
      )}
    </Layout>
  );
};

const SCOPE_WORDS: Readonly<Record<string, string>> = {
  "intents:read": "read your requests and their offers",
  "intents:manage": "publish, change and withdraw your requests",
};

/** Manage page (OAuth, issue #8): the assistants this person let in, each revoked in one action. */
export const AssistantsWithAccess: FC<{
  assistants: readonly AssistantAccess[];
  actionFor: (assistant: AssistantAccess) => string;
  csrf: string;
}> = ({ assistants, actionFor, csrf }) =>
  assistants.length === 0 ? null : (
    <>
      <h2 id="assistants">Assistants you signed in to</h2>
      <ul aria-labelledby="assistants">
        {assistants.map((assistant) => (
          <li>
            <p>
              <strong>{assistant.clientName}</strong> (signs in at {assistant.redirectHosts.join(", ")}) may{" "}
              {assistant.scopes.map((scope) => SCOPE_WORDS[scope] ?? scope).join(" and ")}.
            </p>
            <form method="post" action={actionFor(assistant)}>
              <input type="hidden" name="csrf" value={csrf} />
              <button type="submit" class="danger">
                Revoke this assistant's access
              </button>
            </form>
          </li>
        ))}
      </ul>
    </>
  );
