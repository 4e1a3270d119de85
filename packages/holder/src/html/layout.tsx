/**
 * The frame every page shares: one small inline stylesheet (allowed by its hash in the CSP, so the
 * policy needs neither 'unsafe-inline' nor any script source), a skip link, a header with the
 * holder's name, and a main landmark with the page's one h1.
 */
import { createHash } from "node:crypto";
import type { Child, FC } from "hono/jsx";
import { messagesFor } from "../i18n/messages/index.js";
import { languageLinks } from "../i18n/request-language.js";
import { DEFAULT_LANG, LANGUAGE_NAMES, type Lang } from "../model/languages.js";

export const STYLESHEET = [
  ":root{color-scheme:light dark;--fg:#1b1f24;--bg:#ffffff;--muted:#4f5864;--accent:#0b57b0;--accent-fg:#ffffff;",
  "--border:#c9d1d9;--panel:#f4f6f8;--err:#b3261e;--err-bg:#fdecea;--ok:#116329;--ok-bg:#e6f4ea;--focus:#c2410c}",
  "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#a6b0bb;--accent:#6cb6ff;",
  "--accent-fg:#0d1117;--border:#3b434c;--panel:#161b22;--err:#ff8a80;--err-bg:#3a1414;--ok:#56d364;--ok-bg:#12301b;--focus:#ffb86b}}",
  "*{box-sizing:border-box}",
  "html{-webkit-text-size-adjust:100%}",
  'body{margin:0;font:1.0625rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--fg);background:var(--bg)}',
  ".wrap{max-width:44rem;margin:0 auto;padding:0 1.25rem}",
  ".site{border-bottom:1px solid var(--border);padding:.75rem 0}",
  ".site .wrap{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;justify-content:space-between}",
  ".site p{margin:0;font-weight:600}",
  ".langs ul{display:flex;gap:.75rem;list-style:none;margin:0;padding:0;font-size:.9375rem}",
  '.langs [aria-current="true"]{font-weight:600}',
  "main{padding:1.25rem 0 3rem}",
  "h1{font-size:1.75rem;line-height:1.25;margin:.5rem 0 1rem}",
  "h2{font-size:1.25rem;margin:2rem 0 .75rem}",
  "h3{font-size:1.0625rem;margin:0 0 .25rem}",
  "a{color:var(--accent);text-underline-offset:.15em}",
  "a:hover{text-decoration-thickness:2px}",
  ":focus-visible{outline:3px solid var(--focus);outline-offset:2px}",
  ".skip{position:absolute;left:-999px;top:.5rem;background:var(--bg);padding:.5rem 1rem;border:2px solid var(--focus)}",
  ".skip:focus{left:.5rem}",
  ".lead{font-size:1.125rem}",
  ".muted{color:var(--muted)}",
  "dl.facts{display:grid;grid-template-columns:minmax(7rem,max-content) 1fr;gap:.35rem 1rem;margin:0;",
  "padding:1rem;background:var(--panel);border:1px solid var(--border);border-radius:.5rem}",
  "dl.facts dt{font-weight:600}dl.facts dd{margin:0}",
  "dl.facts ul{margin:0;padding-left:1.1rem}",
  "@media (max-width:30rem){dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.5rem}}",
  ".statement{font-size:1.125rem;font-weight:600;white-space:pre-wrap;overflow-wrap:anywhere}",
  "blockquote{margin:0;padding:.75rem 1rem;border-left:4px solid var(--accent);background:var(--panel);white-space:pre-wrap}",
  "form{margin:1.25rem 0}",
  ".field{margin:0 0 1.25rem}",
  ".field label{display:block;font-weight:600;margin-bottom:.25rem}",
  ".hint{display:block;color:var(--muted);font-size:.9375rem;margin:.15rem 0 .35rem}",
  'input[type="email"]{width:100%;max-width:28rem;font:inherit;padding:.55rem .7rem;color:var(--fg);background:var(--bg);',
  "border:2px solid var(--muted);border-radius:.35rem}",
  '[aria-invalid="true"]{border-color:var(--err)!important}',
  ".check{display:flex;gap:.75rem;align-items:flex-start}",
  ".check input{width:1.35rem;height:1.35rem;margin:.2rem 0 0;flex:none;accent-color:var(--accent)}",
  ".check label{font-weight:400;margin:0}",
  "button{font:inherit;font-weight:600;padding:.65rem 1.25rem;border-radius:.4rem;border:2px solid var(--accent);",
  "background:var(--accent);color:var(--accent-fg);cursor:pointer}",
  "button:hover{filter:brightness(1.08)}",
  "button.danger{background:var(--err);border-color:var(--err);color:var(--bg)}",
  ".error{color:var(--err);font-weight:600;display:block;margin:.15rem 0 .35rem}",
  ".alert{border:2px solid var(--err);background:var(--err-bg);padding:.75rem 1rem;border-radius:.5rem;margin:0 0 1.25rem}",
  ".alert h2{margin:0 0 .35rem;font-size:1.0625rem}.alert ul{margin:0;padding-left:1.2rem}",
  ".notice{border:2px solid var(--ok);background:var(--ok-bg);padding:.75rem 1rem;border-radius:.5rem;margin:0 0 1.25rem}",
  ".badge{display:inline-block;padding:.1rem .6rem;border-radius:1rem;border:1px solid currentColor;font-size:.9375rem;font-weight:600}",
  ".badge.active{color:var(--ok)}.badge.ended{color:var(--muted)}.badge.waiting{color:var(--accent)}",
  "ol.offers{list-style:none;margin:0;padding:0}",
  "ol.offers li{border:1px solid var(--border);border-radius:.5rem;padding:.75rem 1rem;margin:0 0 .75rem}",
  "ol.offers p{margin:.15rem 0}",
  "table{border-collapse:collapse;width:100%}",
  "table.mailbox td{overflow-wrap:anywhere}",
  // A phone's width: each mail becomes a block of three lines instead of three squeezed columns.
  "@media (max-width:36rem){table.mailbox thead{position:absolute;left:-9999px}table.mailbox tr,table.mailbox td{display:block}",
  "table.mailbox tr{border-bottom:1px solid var(--border);padding:.5rem 0}table.mailbox td{border:0;padding:.1rem 0}}",
  "th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--border);vertical-align:top}",
  "pre.mail{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--panel);border:1px solid var(--border);",
  "padding:1rem;border-radius:.5rem;font-size:.9375rem}",
  "footer{border-top:1px solid var(--border);padding:1rem 0 2rem;font-size:.9375rem;color:var(--muted)}",
].join("");

/** A stylesheet's CSP source: allowed by its hash, never by 'unsafe-inline'. */
const styleHash = (css: string) => `'sha256-${createHash("sha256").update(css, "utf8").digest("base64")}'`;

/**
 * No script of any kind, the stylesheets by hash (the shared one, and a page's own when it has
 * one), forms only to this origin, never framed. `form-action 'self'` also keeps a planted form
 * from posting a token elsewhere.
 */
export function contentSecurityPolicy(pageStyle?: string): string {
  const styles = [STYLESHEET, ...(pageStyle === undefined ? [] : [pageStyle])].map(styleHash);
  return [
    "default-src 'none'",
    `style-src ${styles.join(" ")}`,
    "img-src 'none'",
    "script-src 'none'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

export interface LayoutProps {
  /** The page's own title; the holder's name is appended. */
  title: string;
  holderName: string;
  /** The page's language (`lang` on <html>); English when not given. */
  lang?: Lang;
  /** Whether the page offers the language switch (pages a GET can show again; not form results). */
  langSwitch?: boolean;
  /** The page's own stylesheet after the shared one; its response's CSP must allow it (contentSecurityPolicy). */
  pageStyle?: string;
  children?: Child;
}

/** Links to the same page in the other languages; the current one is marked, not linked. */
const LanguageSwitch: FC<{ lang: Lang }> = ({ lang }) => (
  <nav class="langs" aria-label={messagesFor(lang).layout.languages}>
    <ul>
      {languageLinks(lang).map((link) => (
        <li>
          {link.current ? (
            <span aria-current="true" lang={link.lang}>
              {LANGUAGE_NAMES[link.lang]}
            </span>
          ) : (
            <a href={link.href} hreflang={link.lang} lang={link.lang}>
              {LANGUAGE_NAMES[link.lang]}
            </a>
          )}
        </li>
      ))}
    </ul>
  </nav>
);

export const Layout: FC<LayoutProps> = ({
  title,
  holderName,
  lang = DEFAULT_LANG,
  langSwitch,
  pageStyle,
  children,
}) => (
  <html lang={lang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <meta name="robots" content="noindex, nofollow" />
      <title>{`${title} – ${holderName}`}</title>
      <style dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
      {pageStyle !== undefined && <style dangerouslySetInnerHTML={{ __html: pageStyle }} />}
    </head>
    <body>
      <a class="skip" href="#main">
        {messagesFor(lang).layout.skip}
      </a>
      <header class="site">
        <div class="wrap">
          <p>{holderName}</p>
          {langSwitch === true && <LanguageSwitch lang={lang} />}
        </div>
      </header>
      <main id="main" tabindex={-1}>
        <div class="wrap">{children}</div>
      </main>
      <footer>
        <div class="wrap">
          <p>{messagesFor(lang).layout.footer(holderName)}</p>
        </div>
      </footer>
    </body>
  </html>
);
