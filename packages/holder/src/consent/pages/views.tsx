/**
 * The pages themselves, as pure components of what the services returned. None of them ever gets
 * a contact, a hidden limit's value or another token than the one in its own URL.
 */
import { OFFER_LIMITS, STATEMENT_MAX } from "@doorbell/intents";
import type { FC } from "hono/jsx";
import {
  criteriaLines,
  formatArea,
  formatDuration,
  formatMoney,
  safeExternalUrl,
  statusWords,
  visibilityWords,
} from "../../html/format.js";
import { Layout } from "../../html/layout.js";
import { When } from "../../html/when.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";
import { quoteName, quoteText } from "../../model/quoting.js";
import type { Intent, Match } from "../../model/types.js";
import type { AssistantAccess } from "../../oauth/owners.js";
import type { NotificationReceipt } from "../../push/service.js";

/** The intent as the person reads it: everything an agent may see, and "a hidden limit is set". */
export const IntentFacts: FC<{ intent: Intent; lang?: Lang }> = ({ intent, lang = DEFAULT_LANG }) => {
  const criteria = criteriaLines(intent.criteria, lang);
  const t = messagesFor(lang).facts;
  return (
    <dl class="facts">
      <dt>{t.request}</dt>
      <dd class="statement">{quoteText(intent.statement, STATEMENT_MAX)}</dd>
      {criteria.length > 0 && (
        <>
          <dt>{t.what}</dt>
          <dd>
            <ul>
              {criteria.map((line) => (
                <li>{line}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
      <dt>{t.where}</dt>
      <dd>{formatArea(intent.area, lang)}</dd>
      <dt>{t.budget}</dt>
      <dd>{intent.budget === undefined ? t.notGiven : formatMoney(intent.budget, lang)}</dd>
      <dt>{t.hiddenLimit}</dt>
      <dd>{intent.hasHiddenLimit ? t.hiddenLimitSet : t.none}</dd>
      {intent.buyBy !== undefined && (
        <>
          <dt>{t.buyBy}</dt>
          <dd>
            <When value={intent.buyBy} lang={lang} />
          </dd>
        </>
      )}
      <dt>{t.validUntil}</dt>
      <dd>
        <When value={intent.validUntil} lang={lang} />
      </dd>
      <dt>{t.visibility}</dt>
      <dd>{visibilityWords(intent.visibility, lang)}</dd>
    </dl>
  );
};

function statusClass(intent: Intent): string {
  if (intent.status === "active") return "badge active";
  if (intent.status === "expired" || intent.status === "withdrawn") return "badge ended";
  return "badge waiting";
}

const StatusLine: FC<{ intent: Intent; lang?: Lang }> = ({ intent, lang = DEFAULT_LANG }) => (
  <p>
    {messagesFor(lang).status.prefix}{" "}
    <span class={statusClass(intent)}>{statusWords(intent.status, lang).label}</span>{" "}
    <span class="muted">{statusWords(intent.status, lang).explain}</span>
  </p>
);

/** The hidden field every form carries (see security.ts). */
const FormToken: FC<{ value: string }> = ({ value }) => <input type="hidden" name="csrf" value={value} />;

/**
 * The parts of the consent and manage pages that other concerns draw (push's notifications, the
 * OAuth assistants), handed in by the composer (web/person-pages.tsx) so that this page module
 * imports no other concern's pages.
 */
export interface ConsentPageSlots {
  NotificationChoices: FC<{ choices: readonly NotificationReceipt[]; lang?: Lang }>;
  NotificationReceipts: FC<{
    receipts: readonly NotificationReceipt[];
    actionFor: (receipt: NotificationReceipt, action: "allow" | "stop") => string;
    csrf: string;
    lang?: Lang;
  }>;
  AssistantsWithAccess: FC<{
    assistants: readonly AssistantAccess[];
    actionFor: (assistant: AssistantAccess) => string;
    csrf: string;
    lang?: Lang;
  }>;
}

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
  /** The consent text's own language, when it differs from the page's (no translation yet). */
  consentLanguage?: Lang;
  action: string;
  csrf: string;
  email?: string;
  errors?: ConsentErrors;
  /** Push subscriptions made while the request awaited consent: separate, unticked choices. */
  notifications?: readonly NotificationReceipt[];
  slots: Pick<ConsentPageSlots, "NotificationChoices">;
  lang?: Lang;
  langSwitch?: boolean;
}

export const ConsentFormPage: FC<ConsentFormProps> = (props) => {
  const { intent, errors = {}, lang = DEFAULT_LANG } = props;
  const { NotificationChoices } = props.slots;
  const t = messagesFor(lang).consent;
  const textLang = props.consentLanguage ?? lang;
  const problems = [
    errors.version && { href: "#consent-text", text: errors.version },
    errors.email && { href: "#email", text: errors.email },
    errors.consent && { href: "#consent", text: errors.consent },
  ].filter((item): item is { href: string; text: string } => typeof item === "object");
  const title = problems.length > 0 ? t.errorTitle : t.title;
  return (
    <Layout title={title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.title}</h1>
      {problems.length > 0 && (
        <div class="alert" role="alert" aria-labelledby="problems">
          <h2 id="problems">{t.problems}</h2>
          <ul>
            {problems.map((problem) => (
              <li>
                <a href={problem.href}>{problem.text}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <p class="lead">{t.lead(props.holderName)}</p>
      {intent.draftExpiresAt !== undefined && (
        <p class="muted">
          {t.linkWorksUntil.before}
          <When value={intent.draftExpiresAt} lang={lang} />
          {t.linkWorksUntil.after}
        </p>
      )}
      <h2>{t.theRequest}</h2>
      <IntentFacts intent={intent} lang={lang} />
      <h2 id="consent-text">{t.consentText}</h2>
      <p class="muted">{t.version(props.consentVersion)}</p>
      {textLang !== lang && <p>{t.onlyInEnglish}</p>}
      <blockquote lang={textLang === lang ? undefined : textLang}>{props.consentText}</blockquote>
      <form method="post" action={props.action}>
        <FormToken value={props.csrf} />
        <input type="hidden" name="consentVersion" value={props.consentVersion} />
        <div class="field">
          <label for="email">{t.email}</label>
          <span class="hint" id="email-hint">
            {t.emailHint}
          </span>
          {errors.email && (
            <span class="error" id="email-error">
              {t.errorPrefix} {errors.email}
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
              {t.errorPrefix} {errors.consent}
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
            <label for="consent">{t.agree(props.consentVersion)}</label>
          </div>
        </div>
        <NotificationChoices choices={props.notifications ?? []} lang={lang} />
        <button type="submit">{t.submit}</button>
      </form>
    </Layout>
  );
};

export const CheckEmailPage: FC<{
  holderName: string;
  confirmTtlMs: number;
  mailboxUrl?: string;
  lang?: Lang;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).checkEmail;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang}>
      <h1>{t.title}</h1>
      <p class="notice" role="status">
        {t.notice}
      </p>
      <p class="lead">{t.lead(formatDuration(props.confirmTtlMs, lang))}</p>
      <p>{t.everyMail}</p>
      {props.mailboxUrl !== undefined && (
        <p>
          {t.mailbox.before}
          <a href={props.mailboxUrl}>{t.mailbox.link}</a>
          {t.mailbox.after}
        </p>
      )}
    </Layout>
  );
};

export const ConfirmPage: FC<{
  holderName: string;
  action: string;
  csrf: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).confirm;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.title}</h1>
      <p class="lead">{t.lead}</p>
      <form method="post" action={props.action}>
        <FormToken value={props.csrf} />
        <button type="submit">{t.button}</button>
      </form>
      <p class="muted">{t.why}</p>
    </Layout>
  );
};

export const ActivePage: FC<{
  holderName: string;
  intent: Intent;
  manageUrl?: string;
  mailboxUrl?: string;
  lang?: Lang;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).active;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang}>
      <h1>{t.title}</h1>
      <p class="notice" role="status">
        {t.notice}
      </p>
      <StatusLine intent={props.intent} lang={lang} />
      <IntentFacts intent={props.intent} lang={lang} />
      {props.manageUrl !== undefined ? (
        <p>
          {t.manageLink.before}
          <a href={props.manageUrl}>{t.manageLink.link}</a>
          {t.manageLink.after}
        </p>
      ) : (
        <p>
          {t.everyMail}
          {props.mailboxUrl !== undefined ? (
            <>
              {t.mailbox.before}
              <a href={props.mailboxUrl}>{t.mailbox.link}</a>
              {t.mailbox.after}
            </>
          ) : null}
          .
        </p>
      )}
    </Layout>
  );
};

export interface ManageProps {
  holderName: string;
  intent: Intent;
  matches: readonly Match[];
  withdrawAction: string;
  /** Where the renewal form posts, and the latest last day it may choose (YYYY-MM-DD). */
  renewAction?: string;
  renewMax?: string;
  /** The date the form starts with (an assistant's offer, YYYY-MM-DD); default the current end. */
  renewValue?: string;
  csrf: string;
  /** The push subscriptions of the request, with their receipts. */
  notifications?: readonly NotificationReceipt[];
  notificationAction?: (receipt: NotificationReceipt, action: "allow" | "stop") => string;
  /** OAuth: the assistants the person signed in to, and where revoking one posts. */
  assistants?: readonly AssistantAccess[];
  assistantAction?: (assistant: AssistantAccess) => string;
  slots: Pick<ConsentPageSlots, "NotificationReceipts" | "AssistantsWithAccess">;
  lang?: Lang;
  langSwitch?: boolean;
}

export const ManagePage: FC<ManageProps> = (props) => {
  const { holderName, intent, matches, withdrawAction, csrf, lang = DEFAULT_LANG } = props;
  const { NotificationReceipts, AssistantsWithAccess } = props.slots;
  const t = messagesFor(lang).manage;
  const open =
    intent.status === "active" ||
    intent.status === "awaiting_email_confirmation" ||
    intent.status === "awaiting_consent";
  return (
    <Layout title={t.title} holderName={holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.title}</h1>
      <StatusLine intent={intent} lang={lang} />
      <IntentFacts intent={intent} lang={lang} />
      <h2 id="offers">{t.offers(matches.length)}</h2>
      {matches.length === 0 ? (
        <p>{t.noOffers}</p>
      ) : (
        <ol class="offers" aria-labelledby="offers">
          {newestFirst(matches).map((match) => (
            <OfferItem match={match} lang={lang} />
          ))}
        </ol>
      )}
      {props.notificationAction !== undefined && (
        <NotificationReceipts
          receipts={props.notifications ?? []}
          actionFor={props.notificationAction}
          csrf={csrf}
          lang={lang}
        />
      )}
      {props.assistantAction !== undefined && (
        <AssistantsWithAccess
          assistants={props.assistants ?? []}
          actionFor={props.assistantAction}
          csrf={csrf}
          lang={lang}
        />
      )}
      {intent.status === "active" && props.renewAction !== undefined && (
        <>
          <h2 id="renew">{t.renew}</h2>
          <form method="post" action={props.renewAction}>
            <FormToken value={csrf} />
            <p>{t.renewExplain}</p>
            <label>
              {t.renewLabel}{" "}
              <input
                type="date"
                name="validUntil"
                required
                value={props.renewValue ?? intent.validUntil.slice(0, 10)}
                {...(props.renewMax === undefined ? {} : { max: props.renewMax })}
              />
            </label>{" "}
            <button type="submit">{t.renewButton}</button>
          </form>
        </>
      )}
      <h2>{t.withdraw}</h2>
      {open ? (
        <form method="post" action={withdrawAction}>
          <FormToken value={csrf} />
          <p>{t.withdrawExplain}</p>
          <button type="submit" class="danger">
            {t.withdrawButton}
          </button>
        </form>
      ) : (
        <p>{t.ended}</p>
      )}
    </Layout>
  );
};

/** Newest first, whatever order the service gave (ISO instants sort as text). */
const newestFirst = (matches: readonly Match[]): Match[] =>
  [...matches].sort((a, b) => (a.deliveredAt < b.deliveredAt ? 1 : a.deliveredAt > b.deliveredAt ? -1 : 0));

const OfferItem: FC<{ match: Match; lang: Lang }> = ({ match, lang }) => {
  const { offer } = match;
  const t = messagesFor(lang).manage;
  const url = safeExternalUrl(offer.url);
  // The seller's words: the offer's own link stays the one link, the title never makes another.
  const title = quoteName(offer.title, OFFER_LIMITS.titleMax);
  return (
    <li>
      <h3>
        {url !== undefined ? (
          <a href={url} rel="noreferrer noopener nofollow">
            {title}
          </a>
        ) : (
          title
        )}
      </h3>
      <p>
        <strong>{formatMoney(offer.price, lang)}</strong> · {formatArea(offer.location, lang)}
      </p>
      {offer.source.kind === "reply" && <p>{t.sellerAnswer}</p>}
      <p class="muted">
        {t.sentTo}
        <When value={match.deliveredAt} lang={lang} />
      </p>
    </li>
  );
};

export const WithdrawnPage: FC<{ holderName: string; intent: Intent; manageUrl: string; lang?: Lang }> = ({
  lang = DEFAULT_LANG,
  ...props
}) => {
  const t = messagesFor(lang).withdrawn;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang}>
      <h1>{t.title}</h1>
      <p class="notice" role="status">
        {t.notice}
      </p>
      <StatusLine intent={props.intent} lang={lang} />
      <p>
        <a href={props.manageUrl}>{t.back}</a>
      </p>
    </Layout>
  );
};
