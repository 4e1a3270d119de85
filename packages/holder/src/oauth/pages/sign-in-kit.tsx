/**
 * What the sign-in routes share: the interaction of this browser (oidc-provider's cookie), the
 * client as the person sees it, the guarded form, the pages' answers in the request's language and
 * the hand-back to the provider.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { Interaction, Provider } from "oidc-provider";
import type { Logger } from "pino";
import type { HolderConfig } from "../../context.js";
import { CONTENT_SECURITY_POLICY } from "../../html/layout.js";
import {
  createFormGuard,
  type FormGuard,
  MAX_FORM_BYTES,
  PAGE_HEADERS,
  readForm,
} from "../../html/security.js";
import { plural } from "../../i18n/format.js";
import { type Messages, messagesFor } from "../../i18n/messages/index.js";
import { requestLanguage } from "../../i18n/request-language.js";
import type { HolderLimits, LimitHint } from "../../limits/index.js";
import { minutesToWait } from "../../mail/request-limits.js";
import { quoteName } from "../../model/quoting.js";
import type { SignInContext } from "../signin.js";
import { Message } from "./views.js";

export interface OAuthPagesDeps {
  provider: Provider;
  signIn: SignInContext;
  config: HolderConfig;
  /** The protected resource (the MCP endpoint's URL). */
  resource: string;
  log?: Pick<Logger, "error">;
  /** The shared limits on sign-in mails. */
  limits?: HolderLimits;
}

export interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

type SignInWords = Messages["signin"];
/** The sign-in catalogue's plain sentences: the titles and texts of the message pages. */
export type SignInSentence = {
  [K in keyof SignInWords]: SignInWords[K] extends string ? K : never;
}[keyof SignInWords];

/** `form-action` must allow the assistant's redirect: the approve POST ends there (303 chain). */
export function cspWithFormTarget(redirectUri: string | undefined): string {
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

/** An interaction id in a sign-in URL. */
const UID = /^[A-Za-z0-9_-]{8,64}$/;

export interface SignInKit {
  readonly holderName: string;
  readonly guard: FormGuard;
  render(c: Context, status: number, page: JSX.Element, csp?: string): Promise<Response>;
  /** A message page in the request's language, from the sign-in catalogue. */
  message(c: Context, status: number, title: SignInSentence, text: SignInSentence): Promise<Response>;
  /** The 429 of a sign-in mail: how long to wait, and the limit's name and flag for the operator. */
  mailLimited(c: Context, limit: LimitHint, retryAfterSeconds: number): Promise<Response>;
  /** The interaction of this browser (the provider's cookie), or why not. */
  interactionOf(c: Context): Promise<Interaction | Response>;
  clientOf(interaction: Interaction): Promise<{ name: string; redirectHost: string }>;
  formOk(c: Context): Promise<Record<string, string> | Response>;
  finish(c: Context, result: Record<string, unknown>): Promise<Response>;
  /** The body limit of every sign-in POST. */
  limit: MiddlewareHandler;
}

export function createSignInKit(deps: OAuthPagesDeps): SignInKit {
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
    // Whatever a client calls itself, and wherever it redirects, is its own words: quoted.
    return { name: quoteName(client?.clientName ?? clientId), redirectHost: quoteName(redirectHost) };
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

  return { holderName, guard, render, message, mailLimited, interactionOf, clientOf, formOk, finish, limit };
}
