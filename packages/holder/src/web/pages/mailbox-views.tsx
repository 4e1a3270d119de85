/** The local mailbox's pages (development): the list of mails and one mail, links made clickable. */
import type { Child, FC } from "hono/jsx";
import { safeExternalUrl } from "../../html/format.js";
import { Layout } from "../../html/layout.js";
import { When } from "../../html/when.js";
import { messagesFor } from "../../i18n/messages/index.js";
import type { MailboxEntry } from "../../mail/local-mailbox.js";
import { DEFAULT_LANG, type Lang } from "../../model/languages.js";

/** `base`: the mailbox page's own path (unguessable under `doorbell serve`). */
export const MailboxListPage: FC<{
  holderName: string;
  entries: readonly MailboxEntry[];
  base?: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ lang = DEFAULT_LANG, ...props }) => (
  <Layout
    title={messagesFor(lang).mailbox.title}
    holderName={props.holderName}
    lang={lang}
    langSwitch={props.langSwitch}
  >
    <h1>{messagesFor(lang).mailbox.title}</h1>
    <p class="muted">{messagesFor(lang).mailbox.explain}</p>
    {props.entries.length === 0 ? (
      <p>{messagesFor(lang).mailbox.empty}</p>
    ) : (
      <table class="mailbox">
        <caption class="muted">{messagesFor(lang).mailbox.newestFirst}</caption>
        <thead>
          <tr>
            <th scope="col">{messagesFor(lang).mailbox.received}</th>
            <th scope="col">{messagesFor(lang).mailbox.to}</th>
            <th scope="col">{messagesFor(lang).mailbox.subject}</th>
          </tr>
        </thead>
        <tbody>
          {props.entries.map((entry) => (
            <tr>
              <td>
                <When value={entry.createdAt} lang={lang} />
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

export const MailboxMailPage: FC<{
  holderName: string;
  entry: MailboxEntry;
  base?: string;
  lang?: Lang;
  langSwitch?: boolean;
}> = ({ holderName, entry, base, lang = DEFAULT_LANG, langSwitch }) => (
  <Layout title={entry.subject} holderName={holderName} lang={lang} langSwitch={langSwitch}>
    <p>
      <a href={base ?? "/dev/mailbox"}>{messagesFor(lang).mailbox.back}</a>
    </p>
    <h1>{entry.subject}</h1>
    <dl class="facts">
      <dt>{messagesFor(lang).mailbox.to}</dt>
      <dd>{entry.to}</dd>
      <dt>{messagesFor(lang).mailbox.received}</dt>
      <dd>
        <When value={entry.createdAt} lang={lang} />
      </dd>
    </dl>
    <h2>{messagesFor(lang).mailbox.message}</h2>
    <pre class="mail">{linkify(entry.text)}</pre>
  </Layout>
);
