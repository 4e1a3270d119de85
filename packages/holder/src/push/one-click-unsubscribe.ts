/**
 * One action from every e-mail about an intent (push profile §6 rule 3): each
 * such mail carries RFC 8058 one-click `List-Unsubscribe` and `List-Unsubscribe-Post` headers
 * naming `<manage URL>/unsubscribe`, and a POST there with `List-Unsubscribe=One-Click` takes back
 * every notification the person allowed for the intent: the subscriptions end at once and each
 * agent is told once. The manage token in the URL is the capability (as on the manage page).
 *
 * Only a POST acts: a link scanner or a prefetching mail client that GETs the URL is shown a page
 * with a button and changes nothing. The intent itself stays (withdrawing it is the footer's link).
 */
import type { Context, Env, Hono, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "pino";
import { isTokenShaped, PAGE_HEADERS } from "../html/security.js";
import { messagesFor } from "../i18n/messages/index.js";
import { requestLanguage } from "../i18n/request-language.js";
import { ONE_CLICK, UNSUBSCRIBE_PATH_SUFFIX } from "../mail/list-unsubscribe.js";
import type { Lang } from "../model/languages.js";
import type { ConsentService } from "../model/services.js";
import { HolderError } from "../model/types.js";
import type { PushService } from "./types.js";

export interface OneClickDeps {
  consent: Pick<ConsentService, "manageView">;
  push?: Pick<PushService, "receipts" | "revoke">;
  holderName: string;
  log?: Pick<Logger, "info" | "warn">;
}

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The page's words, in the language the request negotiates (as the other pages do). */
const wordsOf = (c: Context): { lang: Lang; t: ReturnType<typeof messagesFor>["unsubscribe"] } => {
  const lang = requestLanguage(c);
  return { lang, t: messagesFor(lang).unsubscribe };
};

function page(
  c: Context,
  status: number,
  holderName: string,
  lang: Lang,
  title: string,
  body: string,
): Response {
  const html = `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} – ${escapeHtml(holderName)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  const response = c.html(html, status as 200);
  for (const [name, value] of Object.entries(PAGE_HEADERS)) response.headers.set(name, value);
  return response;
}

export function mountOneClickUnsubscribe<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  deps: OneClickDeps,
): void {
  const path = `/manage/:token${UNSUBSCRIBE_PATH_SUFFIX}`;
  const unknown = (c: Context) => {
    const { lang, t } = wordsOf(c);
    return page(c, 404, deps.holderName, lang, t.unknownTitle, `<p>${escapeHtml(t.unknown)}</p>`);
  };

  // A GET never acts: scanners and previews open links.
  app.get(path, (c) => {
    const token = c.req.param("token");
    if (!isTokenShaped(token)) return unknown(c);
    const { lang, t } = wordsOf(c);
    return page(
      c,
      200,
      deps.holderName,
      lang,
      t.title,
      `<p>${escapeHtml(t.explain)}</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">${escapeHtml(t.button)}</button></form>`,
    );
  });

  app.post(
    path,
    bodyLimit({
      maxSize: 4096,
      onError: (c) => {
        const { lang, t } = wordsOf(c);
        return page(c, 413, deps.holderName, lang, t.tooLargeTitle, "");
      },
    }),
    async (c) => {
      const token = c.req.param("token");
      if (!isTokenShaped(token)) return unknown(c);
      let oneClick = false;
      try {
        const body = await c.req.parseBody();
        oneClick = body["List-Unsubscribe"] === "One-Click";
      } catch {
        oneClick = false;
      }
      if (!oneClick) {
        const { lang, t } = wordsOf(c);
        return page(
          c,
          400,
          deps.holderName,
          lang,
          t.notOneClickTitle,
          `<p>${escapeHtml(t.notOneClick(ONE_CLICK))}</p>`,
        );
      }
      let intentId: string;
      try {
        intentId = (await deps.consent.manageView(token)).intent.id;
      } catch (error) {
        if (error instanceof HolderError) return unknown(c);
        throw error;
      }
      let stopped = 0;
      for (const receipt of (await deps.push?.receipts(intentId)) ?? []) {
        if (receipt.status === "ended") continue;
        try {
          await deps.push?.revoke(intentId, receipt.id);
          stopped += 1;
        } catch (error) {
          // Ended by someone else meanwhile: nothing left to stop.
          if (!(error instanceof HolderError)) throw error;
        }
      }
      deps.log?.info(
        { event: "push.one_click_unsubscribe", intentId, stopped },
        "notifications stopped from an e-mail",
      );
      const { lang, t } = wordsOf(c);
      return page(c, 200, deps.holderName, lang, t.stoppedTitle, `<p>${escapeHtml(t.stopped)}</p>`);
    },
  );
}
