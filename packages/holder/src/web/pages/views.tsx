/**
 * The pages themselves, as pure components of what the services returned. None of them ever gets
 * a contact, a hidden limit's value or another token than the one in its own URL.
 */
import type { Child, FC } from "hono/jsx";
import type { Intent, Match } from "../../domain/types.js";
import type { MailboxEntry } from "../../mail/local-mailbox.js";
import type { AssistantAccess } from "../../oauth/owners.js";
import type { NotificationReceipt } from "../../push/service.js";
import {
  criteriaLines,
  formatArea,
  formatDateTime,
  formatDuration,
  formatMoney,
  isoDateTime,
  STATUS_WORDS,
  safeExternalUrl,
  VISIBILITY_WORDS,
} from "./format.js";
import { Layout } from "./layout.js";
import { AssistantsWithAccess, NotificationChoices, NotificationReceipts } from "./notification-views.js";

const When: FC<{ value: string | number }> = ({ value }) => (
  <time datetime={isoDateTime(value)}>{formatDateTime(value)}</time>
);

/** The intent as the person reads it: everything an agent may see, and "a hidden limit is set". */
export const IntentFacts: FC<{ intent: Intent }> = ({ intent }) => {
  const criteria = criteriaLines(intent.criteria);
  return (
    <dl class="facts">
      <dt>Request</dt>
      <dd class="statement">{intent.statement}</dd>
      {criteria.length > 0 && (
        <>
          <dt>What</dt>
          <dd>
            <ul>
              {criteria.map((line) => (
                <li>{line}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
      <dt>Where</dt>
      <dd>{formatArea(intent.area)}</dd>
      <dt>Budget</dt>
      <dd>{intent.budget === undefined ? "Not given" : formatMoney(intent.budget)}</dd>
      <dt>Hidden limit</dt>
      <dd>
        {intent.hasHiddenLimit
          ? "A hidden limit is set. Its value is sealed: it is never shown, here or anywhere else."
          : "None"}
      </dd>
      {intent.buyBy !== undefined && (
        <>
          <dt>Buy by</dt>
          <dd>
            <When value={intent.buyBy} />
          </dd>
        </>
      )}
      <dt>Valid until</dt>
      <dd>
        <When value={intent.validUntil} />
      </dd>
      <dt>Visibility</dt>
      <dd>{VISIBILITY_WORDS[intent.visibility]}</dd>
    </dl>
  );
};

function statusClass(intent: Intent): string {
  if (intent.status === "active") return "badge active";
  if (intent.status === "expired" || intent.status === "withdrawn") return "badge ended";
  return "badge waiting";
}

const StatusLine: FC<{ intent: Intent }> = ({ intent }) => (
  <p>
    Status: <span class={statusClass(intent)}>{STATUS_WORDS[intent.status].label}</span>{" "}
    <span class="muted">{STATUS_WORDS[intent.status].explain}</span>
  </p>
);

/** The hidden field every form carries (see security.ts). */
const FormToken: FC<{ value: string }> = ({ value }) => <input type="hidden" name="csrf" value={value} />;

export interface ConsentErrors {
  email?: string;
  consent?: string;
  version?: string;
}

export interface ConsentFormProps {
  holderName: string;
  intent: Intent;
  consentText: string;
  consentVersion: string;
  action: string;
  csrf: string;
  email?: string;
  errors?: ConsentErrors;
  /** Push subscriptions made while the request awaited consent: separate, unticked choices. */
  notifications?: readonly NotificationReceipt[];
}

export const ConsentFormPage: FC<ConsentFormProps> = (props) => {
  const { intent, errors = {} } = props;
  const problems = [
    errors.version && { href: "#consent-text", text: errors.version },
    errors.email && { href: "#email", text: errors.email },
    errors.consent && { href: "#consent", text: errors.consent },
  ].filter((item): item is { href: string; text: string } => typeof item === "object");
  const title = problems.length > 0 ? "Error: agree to keep this request" : "Agree to keep this request";
  return (
    <Layout title={title} holderName={props.holderName}>
      <h1>Agree to keep this request</h1>
      {problems.length > 0 && (
        <div class="alert" role="alert" aria-labelledby="problems">
          <h2 id="problems">Please check the form</h2>
          <ul>
            {problems.map((problem) => (
              <li>
                <a href={problem.href}>{problem.text}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <p class="lead">
        An AI assistant asked {props.holderName} to keep this request for you and to e-mail you matching
        offers. Nothing happens until you agree below and confirm your e-mail address.
      </p>
      {intent.draftExpiresAt !== undefined && (
        <p class="muted">
          This link works once, until <When value={intent.draftExpiresAt} />.
        </p>
      )}
      <h2>The request</h2>
      <IntentFacts intent={intent} />
      <h2 id="consent-text">Consent text</h2>
      <p class="muted">Version {props.consentVersion}</p>
      <blockquote>{props.consentText}</blockquote>
      <form method="post" action={props.action}>
        <FormToken value={props.csrf} />
        <input type="hidden" name="consentVersion" value={props.consentVersion} />
        <div class="field">
          <label for="email">Your e-mail address</label>
          <span class="hint" id="email-hint">
            We send one link to this address to check that it is yours. Sellers never see it.
          </span>
          {errors.email && (
            <span class="error" id="email-error">
              Error: {errors.email}
            </span>
          )}
          <input
            type="email"
            id="email"
            name="email"
            autocomplete="email"
            inputmode="email"
            spellcheck={false}
            required
            maxlength={254}
            value={props.email ?? ""}
            aria-invalid={errors.email ? "true" : undefined}
            aria-describedby={errors.email ? "email-hint email-error" : "email-hint"}
          />
        </div>
        <div class="field">
          {errors.consent && (
            <span class="error" id="consent-error">
              Error: {errors.consent}
            </span>
          )}
          <div class="check">
            <input
              type="checkbox"
              id="consent"
              name="consent"
              value="yes"
              required
              aria-invalid={errors.consent ? "true" : undefined}
              aria-describedby={errors.consent ? "consent-error" : undefined}
            />
            <label for="consent">I agree to the consent text above (version {props.consentVersion}).</label>
          </div>
        </div>
        <NotificationChoices choices={props.notifications ?? []} />
        <button type="submit">Agree and send the confirmation e-mail</button>
      </form>
    </Layout>
  );
};

export const CheckEmailPage: FC<{ holderName: string; confirmTtlMs: number; mailboxUrl?: string }> = (
  props,
) => (
  <Layout title="Check your e-mail" holderName={props.holderName}>
    <h1>Check your e-mail</h1>
    <p class="notice" role="status">
      Thank you. We sent a confirmation link to the address you gave.
    </p>
    <p class="lead">
      Open the link in that e-mail to make your request active. Until then nothing is matched or sent. The
      link works for {formatDuration(props.confirmTtlMs)}.
    </p>
    <p>Every e-mail we send has a link where you can see your request and its offers, or withdraw it.</p>
    {props.mailboxUrl !== undefined && (
      <p>
        This server sends no real e-mail: read it in the <a href={props.mailboxUrl}>local mailbox</a>.
      </p>
    )}
  </Layout>
);

export const ConfirmPage: FC<{ holderName: string; action: string; csrf: string }> = (props) => (
  <Layout title="Confirm your e-mail address" holderName={props.holderName}>
    <h1>Confirm your e-mail address</h1>
    <p class="lead">
      Press the button to confirm that this e-mail address is yours and to start your request.
    </p>
    <form method="post" action={props.action}>
      <FormToken value={props.csrf} />
      <button type="submit">Confirm and start my request</button>
    </form>
    <p class="muted">
      We ask for a press of the button because some e-mail programs open links by themselves; opening this
      page alone changes nothing.
    </p>
  </Layout>
);

export const ActivePage: FC<{
  holderName: string;
  intent: Intent;
  manageUrl?: string;
  mailboxUrl?: string;
}> = (props) => (
  <Layout title="Your request is active" holderName={props.holderName}>
    <h1>Your request is active</h1>
    <p class="notice" role="status">
      Your e-mail address is confirmed. We will e-mail you offers that match.
    </p>
    <StatusLine intent={props.intent} />
    <IntentFacts intent={props.intent} />
    {props.manageUrl !== undefined ? (
      <p>
        <a href={props.manageUrl}>See its offers or withdraw it</a> at any time. The same link is in every
        e-mail we send you.
      </p>
    ) : (
      <p>
        Every e-mail we send you ends with a link where you can see its offers or withdraw it
        {props.mailboxUrl !== undefined ? (
          <>
            {" "}
            (this server keeps its mail in the <a href={props.mailboxUrl}>local mailbox</a>)
          </>
        ) : null}
        .
      </p>
    )}
  </Layout>
);

export interface ManageProps {
  holderName: string;
  intent: Intent;
  matches: readonly Match[];
  withdrawAction: string;
  csrf: string;
  /** The push subscriptions of the request, with their receipts. */
  notifications?: readonly NotificationReceipt[];
  notificationAction?: (receipt: NotificationReceipt, action: "allow" | "stop") => string;
  /** OAuth (issue #8): the assistants the person signed in to, and where revoking one posts. */
  assistants?: readonly AssistantAccess[];
  assistantAction?: (assistant: AssistantAccess) => string;
}

export const ManagePage: FC<ManageProps> = (props) => {
  const { holderName, intent, matches, withdrawAction, csrf } = props;
  const open =
    intent.status === "active" ||
    intent.status === "awaiting_email_confirmation" ||
    intent.status === "awaiting_consent";
  return (
    <Layout title="Your request" holderName={holderName}>
      <h1>Your request</h1>
      <StatusLine intent={intent} />
      <IntentFacts intent={intent} />
      <h2 id="offers">Offers sent to you ({matches.length})</h2>
      {matches.length === 0 ? (
        <p>No matching offer yet. We e-mail you as soon as one arrives.</p>
      ) : (
        <ol class="offers" aria-labelledby="offers">
          {newestFirst(matches).map((match) => (
            <OfferItem match={match} />
          ))}
        </ol>
      )}
      {props.notificationAction !== undefined && (
        <NotificationReceipts
          receipts={props.notifications ?? []}
          actionFor={props.notificationAction}
          csrf={csrf}
        />
      )}
      {props.assistantAction !== undefined && (
        <AssistantsWithAccess
          assistants={props.assistants ?? []}
          actionFor={props.assistantAction}
          csrf={csrf}
        />
      )}
      <h2>Withdraw</h2>
      {open ? (
        <form method="post" action={withdrawAction}>
          <FormToken value={csrf} />
          <p>Withdrawing stops matching and e-mails at once. It cannot be undone.</p>
          <button type="submit" class="danger">
            Withdraw this request
          </button>
        </form>
      ) : (
        <p>This request has ended; there is nothing to withdraw.</p>
      )}
    </Layout>
  );
};

/** Newest first, whatever order the service gave (ISO instants sort as text). */
const newestFirst = (matches: readonly Match[]): Match[] =>
  [...matches].sort((a, b) => (a.deliveredAt < b.deliveredAt ? 1 : a.deliveredAt > b.deliveredAt ? -1 : 0));

const OfferItem: FC<{ match: Match }> = ({ match }) => {
  const { offer } = match;
  const url = safeExternalUrl(offer.url);
  return (
    <li>
      <h3>
        {url !== undefined ? (
          <a href={url} rel="noreferrer noopener nofollow">
            {offer.title}
          </a>
        ) : (
          offer.title
        )}
      </h3>
      <p>
        <strong>{formatMoney(offer.price)}</strong> · {formatArea(offer.location)}
      </p>
      {offer.source.kind === "reply" && <p>A seller's answer to your request.</p>}
      <p class="muted">
        Sent to you <When value={match.deliveredAt} />
      </p>
    </li>
  );
};

export const WithdrawnPage: FC<{ holderName: string; intent: Intent; manageUrl: string }> = (props) => (
  <Layout title="Your request is withdrawn" holderName={props.holderName}>
    <h1>Your request is withdrawn</h1>
    <p class="notice" role="status">
      Done. Nothing more is matched and we send you no more offers for it.
    </p>
    <StatusLine intent={props.intent} />
    <p>
      <a href={props.manageUrl}>Back to the request</a>
    </p>
  </Layout>
);

/** Any page that only explains: an error, a used link, a refused form. */
export const MessagePage: FC<{ holderName: string; title: string; children?: Child }> = (props) => (
  <Layout title={props.title} holderName={props.holderName}>
    <h1>{props.title}</h1>
    {props.children}
  </Layout>
);

/** `base`: the mailbox page's own path (unguessable under `doorbell serve`, issue #16 item 1). */
export const MailboxListPage: FC<{ holderName: string; entries: readonly MailboxEntry[]; base?: string }> = (
  props,
) => (
  <Layout title="Local mailbox" holderName={props.holderName}>
    <h1>Local mailbox</h1>
    <p class="muted">
      For development: this server has no SMTP server configured, so the mails it would send are kept here.
      Anyone who can open this page can read them.
    </p>
    {props.entries.length === 0 ? (
      <p>No mail yet.</p>
    ) : (
      <table>
        <caption class="muted">Newest first</caption>
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">To</th>
            <th scope="col">Subject</th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((entry) => (
            <tr>
              <td>
                <When value={entry.createdAt} />
              </td>
              <td>{entry.to}</td>
              <td>
                <a href={`${props.base ?? "/dev/mailbox"}/${entry.id}`}>{entry.subject}</a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </Layout>
);

const URL_IN_TEXT = /https?:\/\/[^\s<>"']+/g;

/** The mail's text with every http(s) URL made a link (trailing punctuation left outside). */
export function linkify(text: string): Child[] {
  const parts: Child[] = [];
  let last = 0;
  for (const found of text.matchAll(URL_IN_TEXT)) {
    let url = found[0];
    while (/[.,;:!?)\]]$/.test(url)) url = url.slice(0, -1);
    const start = found.index;
    if (start > last) parts.push(text.slice(last, start));
    const safe = safeExternalUrl(url);
    parts.push(safe !== undefined ? <a href={safe}>{url}</a> : url);
    last = start + url.length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

export const MailboxMailPage: FC<{ holderName: string; entry: MailboxEntry; base?: string }> = ({
  holderName,
  entry,
  base,
}) => (
  <Layout title={entry.subject} holderName={holderName}>
    <p>
      <a href={base ?? "/dev/mailbox"}>Back to the mailbox</a>
    </p>
    <h1>{entry.subject}</h1>
    <dl class="facts">
      <dt>To</dt>
      <dd>{entry.to}</dd>
      <dt>Received</dt>
      <dd>
        <When value={entry.createdAt} />
      </dd>
    </dl>
    <h2>Message</h2>
    <pre class="mail">{linkify(entry.text)}</pre>
  </Layout>
);
