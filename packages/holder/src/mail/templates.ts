/**
 * The person's e-mails: the double opt-in confirmation, the match digest and the withdrawn
 * notice. Each is built once as blocks and rendered to text and to HTML from the same data, so
 * the two parts never say different things. Every e-mail carries the manage link. Nothing here
 * ever receives a hidden limit (only whether one is set) or an intentCode.
 */

import { OFFER_LIMITS } from "@doorbell/intents";
import * as i18n from "../i18n/format.js";
import { mailWordsFor, notificationPromise } from "../i18n/mail-words.js";
import { DEFAULT_LANG, type Lang } from "../model/languages.js";
import { quoteName, quoteText } from "../model/quoting.js";
import type { Area, Money } from "../model/types.js";
import { listUnsubscribeHeaders } from "./list-unsubscribe.js";
import type { MailMessage } from "./mailer.js";

export type RenderedMail = Omit<MailMessage, "to">;

/** What every mail to the person knows. */
export interface MailCommon {
  holderName: string;
  /** The intent's statement, in the person's own words (their mail, their intent). */
  statement: string;
  /** `${publicUrl}/manage/<token>`: see the matches and withdraw in one action. */
  manageUrl: string;
  /** The language of the consent text the person agreed to; English if not given. */
  lang?: Lang;
}

export interface ConfirmationMailData extends MailCommon {
  confirmUrl: string;
  /** ISO 8601: when the confirmation link stops working. */
  confirmExpiresAt: string;
  hasHiddenLimit: boolean;
}

export interface DigestItem {
  title: string;
  price: Money;
  location: Area;
  url?: string;
}

export interface MatchDigestMailData extends MailCommon {
  matches: readonly DigestItem[];
  /** Matches not listed in this mail (they are on the manage page). */
  more: number;
}

export interface WithdrawnMailData extends MailCommon {
  /** ISO 8601. */
  withdrawnAt: string;
}

type Block =
  | { kind: "p"; text: string }
  | { kind: "quote"; text: string }
  | { kind: "action"; label: string; url: string }
  | { kind: "items"; items: readonly { title: string; lines: readonly string[]; url?: string }[] }
  | { kind: "footer"; text: string; label: string; url: string };

const escapeHtml = (value: string): string =>
  value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");

/** Only http(s) links become links: an offer's url comes from a catalogue or a seller. */
function safeUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

function renderText(blocks: readonly Block[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.kind) {
      case "p":
        parts.push(block.text);
        break;
      case "quote":
        // Quoted text is someone else's words: capped, never a link.
        parts.push(
          quoteText(block.text)
            .split("\n")
            .map((line) => `> ${line}`)
            .join("\n"),
        );
        break;
      case "action":
        parts.push(`${block.label}:\n${block.url}`);
        break;
      case "items":
        parts.push(
          block.items
            .map((item) =>
              [
                `* ${item.title}`,
                ...item.lines.map((line) => `  ${line}`),
                ...(item.url ? [`  ${item.url}`] : []),
              ].join("\n"),
            )
            .join("\n\n"),
        );
        break;
      case "footer":
        parts.push(`--\n${block.text}\n${block.label}: ${block.url}`);
        break;
    }
  }
  return `${parts.join("\n\n")}\n`;
}

function renderHtml(subject: string, blocks: readonly Block[], lang: Lang): string {
  const body: string[] = [];
  for (const block of blocks) {
    switch (block.kind) {
      case "p":
        body.push(`<p>${escapeHtml(block.text)}</p>`);
        break;
      case "quote":
        body.push(
          `<blockquote style="margin:0 0 1em;padding:0 1em;border-left:3px solid #999">${escapeHtml(quoteText(block.text)).replace(/\n/g, "<br>")}</blockquote>`,
        );
        break;
      case "action":
        body.push(
          `<p><a href="${escapeHtml(block.url)}" style="display:inline-block;padding:.6em 1.2em;background:#1a56db;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(block.label)}</a></p>`,
          `<p style="font-size:small">${escapeHtml(mailWordsFor(lang).buttonFallback)} ${escapeHtml(block.url)}</p>`,
        );
        break;
      case "items":
        body.push(
          `<ul>${block.items
            .map((item) => {
              const url = safeUrl(item.url);
              const title = url
                ? `<a href="${escapeHtml(url)}">${escapeHtml(item.title)}</a>`
                : escapeHtml(item.title);
              return `<li><strong>${title}</strong>${item.lines.map((line) => `<br>${escapeHtml(line)}`).join("")}</li>`;
            })
            .join("")}</ul>`,
        );
        break;
      case "footer":
        body.push(
          `<hr><p style="font-size:small">${escapeHtml(block.text)} <a href="${escapeHtml(block.url)}">${escapeHtml(block.label)}</a></p>`,
        );
        break;
    }
  }
  return `<!doctype html>\n<html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif;line-height:1.5;max-width:40em">${body.join("\n")}</body></html>\n`;
}

function render(subject: string, blocks: readonly Block[], lang: Lang = DEFAULT_LANG): RenderedMail {
  // A mail about an intent (it has the manage footer) carries RFC 8058 one-click
  // List-Unsubscribe, which stops the intent's notifications (push §6 rule 3).
  const manage = blocks.find((block) => block.kind === "footer");
  return {
    subject,
    text: renderText(blocks),
    html: renderHtml(subject, blocks, lang),
    ...(manage?.kind === "footer" ? { headers: listUnsubscribeHeaders(manage.url) } : {}),
  };
}

function footer(data: MailCommon): Block {
  const words = mailWordsFor(data.lang ?? DEFAULT_LANG);
  return {
    kind: "footer",
    text: words.footer(data.holderName),
    label: words.footerLabel,
    url: data.manageUrl,
  };
}

/** "Bratislava region, Slovakia"; in Slovak and Czech their own names (i18n/places.ts). */
export function formatArea(area: Area, lang: Lang = DEFAULT_LANG): string {
  return i18n.formatArea(area, lang);
}

export function formatMoney(money: Money, lang: Lang = DEFAULT_LANG): string {
  return i18n.formatMoney(money, lang);
}

/** English keeps "2026-12-01 12:00 UTC"; Slovak and Czech write dates their own way. */
const formatDate = (isoDate: string, lang: Lang): string =>
  lang === DEFAULT_LANG
    ? `${isoDate.slice(0, 16).replace("T", " ")} UTC`
    : i18n.formatDateTime(isoDate, lang);

export function confirmationMail(data: ConfirmationMailData): RenderedMail {
  const lang = data.lang ?? DEFAULT_LANG;
  const words = mailWordsFor(lang).confirmation;
  return render(
    words.subject(data.holderName),
    [
      { kind: "p", text: words.hello },
      { kind: "p", text: words.someone(data.holderName) },
      { kind: "quote", text: data.statement },
      ...(data.hasHiddenLimit ? [{ kind: "p" as const, text: words.hiddenLimit }] : []),
      { kind: "p", text: words.nothingUntil(formatDate(data.confirmExpiresAt, lang)) },
      { kind: "action", label: words.action, url: data.confirmUrl },
      { kind: "p", text: words.notYou },
      footer(data),
    ],
    lang,
  );
}

export function matchDigestMail(data: MatchDigestMailData): RenderedMail {
  const lang = data.lang ?? DEFAULT_LANG;
  const words = mailWordsFor(lang).digest;
  const count = data.matches.length + data.more;
  const subject = i18n.plural(count, words.subject, lang);
  const items = data.matches.map((match) => {
    const url = safeUrl(match.url);
    return {
      // The seller's words: the offer's own link is the one link, the title never makes another.
      title: quoteName(match.title, OFFER_LIMITS.titleMax),
      lines: [formatMoney(match.price, lang), formatArea(match.location, lang)],
      ...(url === undefined ? {} : { url }),
    };
  });
  return render(
    subject,
    [
      { kind: "p", text: words.intro(data.holderName) },
      { kind: "quote", text: data.statement },
      { kind: "items", items },
      ...(data.more > 0 ? [{ kind: "p" as const, text: words.more(data.more) }] : []),
      footer(data),
    ],
    lang,
  );
}

export function withdrawnMail(data: WithdrawnMailData): RenderedMail {
  const lang = data.lang ?? DEFAULT_LANG;
  const words = mailWordsFor(lang).withdrawn;
  return render(
    words.subject,
    [
      { kind: "p", text: words.at(formatDate(data.withdrawnAt, lang)) },
      { kind: "quote", text: data.statement },
      { kind: "p", text: words.after(data.holderName) },
      footer(data),
    ],
    lang,
  );
}

export interface NotificationApprovalMailData extends MailCommon {
  /** The host the holder would ring (push profile §6 rule 3). */
  deliveryHost: string;
  /** Through a forwarder: the host it relays to (§7 rule 3). */
  relayFor?: string;
  approveUrl: string;
}

/** What the agent learns from a doorbell, in the person's words (§6 rule 3). */
export const NOTIFICATION_PROMISE = notificationPromise(DEFAULT_LANG);

/** Push profile §6 rule 3: the approval link goes to the verified channel, never to the agent. */
export function notificationApprovalMail(data: NotificationApprovalMailData): RenderedMail {
  const lang = data.lang ?? DEFAULT_LANG;
  const words = mailWordsFor(lang).approval;
  // The hosts are the assistant's choice: quoted, so no mail client makes them links.
  const who =
    data.relayFor === undefined
      ? words.address(quoteName(data.deliveryHost))
      : words.relayed(quoteName(data.relayFor), quoteName(data.deliveryHost));
  return render(
    words.subject,
    [
      { kind: "p", text: words.asked(data.holderName, who) },
      { kind: "quote", text: data.statement },
      { kind: "p", text: notificationPromise(lang) },
      { kind: "p", text: words.nothingUntil },
      { kind: "action", label: words.action, url: data.approveUrl },
      footer(data),
    ],
    lang,
  );
}
