/**
 * Sign-in and consent for assistants that sign the person in (OAuth, issue #8): the holder's own
 * pages for oidc-provider's interactions.
 *
 *   GET  /signin/:uid                  e-mail form (who is signing in), or the consent page
 *   POST /signin/:uid/email            mails a one-time sign-in link (oauth/signin.ts)
 *   GET  /signin/:uid/link/:token      the link of the mail: a button only (GET never acts)
 *   POST /signin/:uid/link/:token      signs in; the provider continues to consent
 *   POST /signin/:uid/approve          grants what the assistant asked for, back to the assistant
 *   POST /signin/:uid/deny             refuses; the assistant gets access_denied
 *
 * The consent page shows the assistant's name, where it will be sent back (redirect host), what
 * each scope lets it do and the holder's consent text (the same text as the consent-link page).
 * Forms are guarded as the other pages are (security.ts). The interaction is found through
 * oidc-provider's own cookie, so these pages work only under the holder's Node server (as the
 * provider itself does); without the Node bindings they answer 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, Env, Hono, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { FC } from "hono/jsx";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { Interaction, Provider } from "oidc-provider";
import type { Logger } from "pino";
import type { HolderConfig } from "../context.js";
import { CONTENT_SECURITY_POLICY, Layout } from "../html/layout.js";
import { createFormGuard, isTokenShaped, MAX_FORM_BYTES, PAGE_HEADERS, readForm } from "../html/security.js";
import { consentTextByVersion, consentTextFor } from "../i18n/consent-texts.js";
import { plural } from "../i18n/format.js";
import { type Messages, messagesFor } from "../i18n/messages/index.js";
import { requestLanguage } from "../i18n/request-language.js";
import { type HolderLimits, type LimitHint, peerAddress } from "../limits/index.js";
import { MAX_NAME_CHARS } from "../mail/quoting.js";
import { allowRequestedMail, minutesToWait } from "../mail/request-limits.js";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";
import { SIGNIN_PATH } from "../model/scopes.js";
import { HolderError } from "../model/types.js";
import { recordAgreedConsent, type SignInContext, sendSignInLink, useSignInLink } from "./signin.js";

export interface OAuthPagesDeps {
  provider: Provider;
  signIn: SignInContext;
  config: HolderConfig;
  /** The protected resource (the MCP endpoint's URL). */
  resource: string;
  log?: Pick<Logger, "error">;
  /** Issue #16 item 2: the shared limits on sign-in mails. */
  limits?: HolderLimits;
}

interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

const FormToken: FC<{ value: string }> = ({ value }) => <input type="hidden" name="csrf" value={value} />;

const SignInPage: FC<{
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

const LinkPage: FC<{
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

const ConsentPage: FC<{
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
      {/* Issue 17 item 8: what the assistant will learn, and from which host it works, first. */}
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

const Message: FC<{ holderName: string; title: string; paragraphs: readonly string[]; lang: Lang }> = (
  props,
) => (
  <Layout title={props.title} holderName={props.holderName} lang={props.lang}>
    <h1>{props.title}</h1>
    {props.paragraphs.map((text) => (
      <p>{text}</p>
    ))}
  </Layout>
);

type SignInWords = Messages["signin"];
/** The sign-in catalogue's plain sentences: the titles and texts of the message pages. */
type SignInSentence = {
  [K in keyof SignInWords]: SignInWords[K] extends string ? K : never;
}[keyof SignInWords];

/** `form-action` must allow the assistant's redirect: the approve POST ends there (303 chain). */
function cspWithFormTarget(redirectUri: string | undefined): string {
  let target = "";
  try {
    if (redirectUri !== undefined) {
      const url = new URL(redirectUri);
      target = url.protocol === "http:" || url.protocol === "https:" ? ` ${url.origin}` : ` ${url.protocol}`;
    }
  } catch {
    target = "";
  }
  return CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self'${target}`);
}

const UID = /^[A-Za-z0-9_-]{8,64}$/;

export function mountOAuthPages<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  deps: OAuthPagesDeps,
): void {
  const { provider, config } = deps;
  const holderName = config.name;
  const guard = createFormGuard({ publicUrl: config.publicUrl });

  const render = async (c: Context, status: number, page: JSX.Element, csp?: string): Promise<Response> => {
    const response = c.html(`<!doctype html>${await page.toString()}`, status as 200);
    for (const [name, value] of Object.entries(PAGE_HEADERS)) response.headers.set(name, value);
    if (csp !== undefined) response.headers.set("Content-Security-Policy", csp);
    return response;
  };
  /** A message page in the request's language, from the sign-in catalogue. */
  const message = (c: Context, status: number, title: SignInSentence, text: SignInSentence) => {
    const lang = requestLanguage(c);
    const t = messagesFor(lang).signin;
    return render(
      c,
      status,
      <Message holderName={holderName} title={t[title]} paragraphs={[t[text]]} lang={lang} />,
    );
  };
  /** The 429 of a sign-in mail: how long to wait, and the limit's name and flag for the operator. */
  const mailLimited = (c: Context, limit: LimitHint, retryAfterSeconds: number) => {
    const lang = requestLanguage(c);
    const t = messagesFor(lang);
    const paragraphs = [
      t.messages.mailLimited(plural(minutesToWait(retryAfterSeconds), t.duration.minutes, lang)),
      t.messages.limitHint(limit),
    ];
    return render(
      c,
      429,
      <Message
        holderName={holderName}
        title={t.messages.mailLimitedTitle}
        paragraphs={paragraphs}
        lang={lang}
      />,
    );
  };

  /** The interaction of this browser (the provider's cookie), or why not. */
  async function interactionOf(c: Context): Promise<Interaction | Response> {
    const uid = c.req.param("uid");
    const env = c.env as NodeBindings | undefined;
    if (uid === undefined || !UID.test(uid) || env?.incoming === undefined || env.outgoing === undefined) {
      return message(c, 404, "unknownTitle", "unknown");
    }
    try {
      const interaction = await provider.interactionDetails(env.incoming, env.outgoing);
      if (interaction.uid !== uid) throw new Error("another sign-in");
      return interaction;
    } catch {
      return message(c, 410, "endedTitle", "ended");
    }
  }

  async function clientOf(interaction: Interaction): Promise<{ name: string; redirectHost: string }> {
    const clientId = String(interaction.params.client_id ?? "");
    const client = await provider.Client.find(clientId);
    let redirectHost = "an app on your device";
    try {
      const url = new URL(String(interaction.params.redirect_uri ?? ""));
      redirectHost = url.host === "" ? url.protocol : url.host;
    } catch {}
    const name = client?.clientName ?? clientId;
    // Issue #16 item 2: whatever a client calls itself is shown short.
    return {
      name: name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS - 1)}…` : name,
      redirectHost,
    };
  }

  async function formOk(c: Context): Promise<Record<string, string> | Response> {
    const form = await readForm(c);
    if (!form.ok) return message(c, form.reason === "content-type" ? 415 : 400, "notFormTitle", "notForm");
    if (guard.check(c, form.fields.csrf) !== undefined) {
      return message(c, 403, "refusedTitle", "refused");
    }
    return form.fields;
  }

  async function finish(c: Context, result: Record<string, unknown>): Promise<Response> {
    const env = c.env as NodeBindings;
    const returnTo = await provider.interactionResult(
      env.incoming as IncomingMessage,
      env.outgoing as ServerResponse,
      result,
      {
        mergeWithLastSubmission: true,
      },
    );
    return new Response(null, { status: 303, headers: { location: returnTo, "cache-control": "no-store" } });
  }

  const limit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: (c) => message(c, 413, "tooLargeTitle", "tooLarge"),
  });

  app.get(`${SIGNIN_PATH}/:uid`, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const client = await clientOf(interaction);
    const csrf = guard.issue(c);
    const base = `${SIGNIN_PATH}/${interaction.uid}`;
    if (interaction.prompt.name === "login") {
      return render(
        c,
        200,
        <SignInPage
          holderName={holderName}
          clientName={client.name}
          action={`${base}/email`}
          csrf={csrf}
          lang={requestLanguage(c)}
          langSwitch
        />,
      );
    }
    const missing = interaction.prompt.details.missingResourceScopes as Record<string, string[]> | undefined;
    const scopes = missing?.[deps.resource] ?? [];
    const lang = requestLanguage(c);
    const consentText = consentTextFor(config, lang);
    return render(
      c,
      200,
      <ConsentPage
        holderName={holderName}
        clientName={client.name}
        redirectHost={client.redirectHost}
        scopes={scopes}
        consentText={consentText.text}
        consentVersion={consentText.version}
        consentLanguage={consentText.lang}
        lang={lang}
        langSwitch
        approve={`${base}/approve`}
        deny={`${base}/deny`}
        csrf={csrf}
      />,
      cspWithFormTarget(String(interaction.params.redirect_uri ?? "")),
    );
  });

  app.post(`${SIGNIN_PATH}/:uid/email`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const client = await clientOf(interaction);
    if (deps.limits !== undefined) {
      // Issue #16 item 2: a sign-in link is a mail anyone may ask for.
      const verdict = await allowRequestedMail(deps.limits, {
        recipient: fields.email ?? "",
        clientKey: deps.limits.clientKey(peerAddress(c.env), c.req.raw.headers),
        interaction: `signin:${interaction.uid}`,
      });
      if (!verdict.ok) {
        const refused = await mailLimited(c, verdict.limit, verdict.retryAfterSeconds);
        refused.headers.set("Retry-After", String(verdict.retryAfterSeconds));
        return refused;
      }
    }
    const lang = requestLanguage(c);
    try {
      await sendSignInLink(deps.signIn, interaction.uid, fields.email ?? "", client.name, lang);
    } catch (error) {
      if (!(error instanceof HolderError)) throw error;
      const csrf = guard.issue(c);
      // The service's reason is English; the other languages say the consent page's sentence.
      const problem = lang === DEFAULT_LANG ? error.message : messagesFor(lang).consent.errors.emailInvalid;
      return render(
        c,
        400,
        <SignInPage
          holderName={holderName}
          clientName={client.name}
          action={`${SIGNIN_PATH}/${interaction.uid}/email`}
          csrf={csrf}
          error={problem}
          lang={lang}
        />,
      );
    }
    return message(c, 200, "sentTitle", "sent");
  });

  app.get(`${SIGNIN_PATH}/:uid/link/:token`, async (c) => {
    const token = c.req.param("token");
    if (!isTokenShaped(token)) return message(c, 404, "unknownLinkTitle", "unknown");
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const csrf = guard.issue(c);
    return render(
      c,
      200,
      <LinkPage
        holderName={holderName}
        action={`${SIGNIN_PATH}/${interaction.uid}/link/${token}`}
        csrf={csrf}
        lang={requestLanguage(c)}
        langSwitch
      />,
    );
  });

  app.post(`${SIGNIN_PATH}/:uid/link/:token`, limit, async (c) => {
    const token = c.req.param("token");
    if (!isTokenShaped(token)) return message(c, 404, "unknownLinkTitle", "unknown");
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const accountId = await useSignInLink(deps.signIn, interaction.uid, token);
    if (accountId === undefined) {
      return message(c, 410, "linkGoneTitle", "linkGone");
    }
    return finish(c, { login: { accountId } });
  });

  app.post(`${SIGNIN_PATH}/:uid/approve`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const accountId = interaction.session?.accountId;
    if (interaction.prompt.name !== "consent" || accountId === undefined) {
      return message(c, 409, "signInFirstTitle", "signInFirst");
    }
    // Any language's current text will do: each has its own version (issue 17 item 8).
    const agreed = consentTextByVersion(config, fields.consentVersion);
    if (agreed === undefined) {
      return message(c, 409, "consentChangedTitle", "consentChanged");
    }
    // The text the person agreed to, and so the language of the mails about what it publishes.
    await recordAgreedConsent(deps.signIn, accountId, agreed.version);
    const clientId = String(interaction.params.client_id);
    const grant =
      (interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId)) ??
      new provider.Grant({ accountId, clientId });
    const details = interaction.prompt.details;
    const oidcScopes = details.missingOIDCScope as string[] | undefined;
    if (oidcScopes !== undefined && oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(" "));
    const resourceScopes = details.missingResourceScopes as Record<string, string[]> | undefined;
    for (const [indicator, scopes] of Object.entries(resourceScopes ?? {})) {
      if (indicator === deps.resource) grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    return finish(c, { consent: { grantId } });
  });

  app.post(`${SIGNIN_PATH}/:uid/deny`, limit, async (c) => {
    const interaction = await interactionOf(c);
    if (interaction instanceof Response) return interaction;
    const fields = await formOk(c);
    if (fields instanceof Response) return fields;
    const env = c.env as NodeBindings;
    const returnTo = await provider.interactionResult(
      env.incoming as IncomingMessage,
      env.outgoing as ServerResponse,
      { error: "access_denied", error_description: "the person did not allow this assistant" },
      { mergeWithLastSubmission: false },
    );
    return new Response(null, { status: 303, headers: { location: returnTo, "cache-control": "no-store" } });
  });
}
