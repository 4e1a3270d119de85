/** The sign-in pages' views: the e-mail form, the link's button, the consent page and a message. */
import type { FC } from "hono/jsx";
import { Layout } from "../../html/layout.js";
import { messagesFor } from "../../i18n/messages/index.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";

const FormToken: FC<{ value: string }> = ({ value }) => <input type="hidden" name="csrf" value={value} />;

export const SignInPage: FC<{
  holderName: string;
  clientName: string;
  action: string;
  csrf: string;
  error?: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).signin;
  const lead = t.lead(props.clientName, props.holderName);
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.heading}</h1>
      <p>
        {lead.before}
        <strong>{lead.client}</strong>
        {lead.after}
      </p>
      <form method="post" action={props.action}>
        <FormToken value={props.csrf} />
        {/* The label above its own input, with a hint: the two no longer run together. */}
        <div class="field">
          <label for="email">{t.email}</label>
          <span class="hint" id="email-hint">
            {t.emailHint}
          </span>
          {props.error === undefined ? null : (
            <span class="error" id="email-error">
              {props.error}
            </span>
          )}
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="email"
            inputmode="email"
            spellcheck={false}
            required
            maxlength={254}
            aria-describedby={props.error === undefined ? "email-hint" : "email-hint email-error"}
            {...(props.error === undefined ? {} : { "aria-invalid": "true" })}
          />
        </div>
        <button type="submit">{t.send}</button>
      </form>
    </Layout>
  );
};

export const LinkPage: FC<{
  holderName: string;
  action: string;
  csrf: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).signin;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.title}</h1>
      <p>{t.linkLead}</p>
      <form method="post" action={props.action}>
        <FormToken value={props.csrf} />
        <button type="submit">{t.button}</button>
      </form>
    </Layout>
  );
};

export const ConsentPage: FC<{
  holderName: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
  consentText: string;
  consentVersion: string;
  /** The consent text's own language (English when the page's has no translation). */
  consentLanguage?: Lang;
  approve: string;
  deny: string;
  csrf: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ lang = DEFAULT_LANG, ...props }) => {
  const t = messagesFor(lang).approve;
  return (
    <Layout title={t.title} holderName={props.holderName} lang={lang} langSwitch={props.langSwitch}>
      <h1>{t.heading(props.clientName)}</h1>
      <p>
        {t.asks.before}
        <strong>{props.clientName}</strong>
        {t.asks.after}
      </p>
      {/* What the assistant will learn, and from which host it works, first. */}
      <dl class="facts">
        <dt>{t.hostTitle}</dt>
        <dd>
          <strong>{props.redirectHost}</strong>
          <br />
          <span class="muted">{t.hostExplain(props.redirectHost)}</span>
        </dd>
        <dt>{t.learnsTitle}</dt>
        <dd>
          <ul>
            {props.scopes.map((scope) => (
              <li>
                {t.scopes[scope] ?? scope} (<code>{scope}</code>)
              </li>
            ))}
          </ul>
          {t.neverLearns}
        </dd>
      </dl>
      <h2>{t.agreeTitle}</h2>
      <p
        lang={
          props.consentLanguage !== undefined && props.consentLanguage !== lang
            ? props.consentLanguage
            : undefined
        }
      >
        {props.consentText}
      </p>
      <p class="muted">{t.version(props.consentVersion)}</p>
      <form method="post" action={props.approve}>
        <FormToken value={props.csrf} />
        <input type="hidden" name="consentVersion" value={props.consentVersion} />
        <button type="submit">{t.allow}</button>
      </form>
      <form method="post" action={props.deny}>
        <FormToken value={props.csrf} />
        <button type="submit" class="danger">
          {t.deny}
        </button>
      </form>
    </Layout>
  );
};

export const Message: FC<{ holderName: string; title: string; paragraphs: readonly string[]; lang: Lang }> = (
  props,
) => (
  <Layout title={props.title} holderName={props.holderName} lang={props.lang}>
    <h1>{props.title}</h1>
    {props.paragraphs.map((text) => (
      <p>{text}</p>
    ))}
  </Layout>
);
