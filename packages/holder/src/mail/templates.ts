/**
 * The person's e-mails: the double opt-in confirmation, the match digest and the withdrawn
 * notice. Each is built once as blocks and rendered to text and to HTML from the same data, so
 * the two parts never say different things. Every e-mail carries the manage link. Nothing here
 * ever receives a hidden limit (only whether one is set) or an intentCode.
 */
import type { Area, Money } from "../domain/types.js";
import type { MailMessage } from "./mailer.js";
import { listUnsubscribeHeaders } from "../web/one-click-unsubscribe.js";
import { quoteText } from "./quoting.js";

export type RenderedMail = Omit<MailMessage, "to">;

/** What every mail to the person knows. */
export interface MailCommon {
  holderName: string;
  /** The intent's statement, in the person's own words (their mail, their intent). */
  statement: string;
  /** `${publicUrl}/manage/<token>`: see the matches and withdraw in one action. */
  manageUrl: string;
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
        // Issue #16 item 2: quoted text is someone else's words: capped, never a link.
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

function renderHtml(subject: string, blocks: readonly Block[]): string {
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
          `<p style="font-size:small">If the button does not work, open this address: ${escapeHtml(block.url)}</p>`,
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
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif;line-height:1.5;max-width:40em">${body.join("\n")}</body></html>\n`;
}

function render(subject: string, blocks: readonly Block[]): RenderedMail {
  // Issue #16 item 17: a mail about an intent (it has the manage footer) carries RFC 8058 one-click
  // List-Unsubscribe, which stops the intent's notifications (push §6 rule 3).
  const manage = blocks.find((block) => block.kind === "footer");
  return {
    subject,
    text: renderText(blocks),
    html: renderHtml(subject, blocks),
    ...(manage?.kind === "footer" ? { headers: listUnsubscribeHeaders(manage.url) } : {}),
  };
}

function footer(data: MailCommon): Block {
  return {
    kind: "footer",
    text: `You get this e-mail from ${data.holderName} because of an intent you confirmed or asked to confirm. You can see its matches or withdraw it at any time, in one step:`,
    label: "Manage or withdraw this intent",
    url: data.manageUrl,
  };
}

const REGION_NAMES: Readonly<Record<string, string>> = {
  "SK-BC": "Banská Bystrica region",
  "SK-BL": "Bratislava region",
  "SK-KI": "Košice region",
  "SK-NI": "Nitra region",
  "SK-PV": "Prešov region",
  "SK-TA": "Trnava region",
  "SK-TC": "Trenčín region",
  "SK-ZI": "Žilina region",
  "CZ-10": "Prague",
  "CZ-20": "Central Bohemian region",
  "CZ-31": "South Bohemian region",
  "CZ-32": "Plzeň region",
  "CZ-41": "Karlovy Vary region",
  "CZ-42": "Ústí nad Labem region",
  "CZ-51": "Liberec region",
  "CZ-52": "Hradec Králové region",
  "CZ-53": "Pardubice region",
  "CZ-63": "Vysočina region",
  "CZ-64": "South Moravian region",
  "CZ-71": "Olomouc region",
  "CZ-72": "Zlín region",
  "CZ-80": "Moravian-Silesian region",
};
const COUNTRY_NAMES: Readonly<Record<string, string>> = { SK: "Slovakia", CZ: "Czechia" };

export function formatArea(area: Area): string {
  const country = COUNTRY_NAMES[area.country] ?? area.country;
  if (area.region === undefined) return country;
  return `${REGION_NAMES[area.region] ?? area.region}, ${country}`;
}

export function formatMoney(money: Money): string {
  return `${money.amount.toLocaleString("en-US", { maximumFractionDigits: 0 })} ${money.currency}`;
}

const formatDate = (isoDate: string): string => `${isoDate.slice(0, 16).replace("T", " ")} UTC`;

export function confirmationMail(data: ConfirmationMailData): RenderedMail {
  const subject = `Confirm your intent at ${data.holderName}`;
  return render(subject, [
    { kind: "p", text: "Hello," },
    {
      kind: "p",
      text: `Someone (we hope you) gave this e-mail address on the ${data.holderName} consent page for this intent:`,
    },
    { kind: "quote", text: data.statement },
    ...(data.hasHiddenLimit
      ? [{ kind: "p" as const, text: "A private price limit is set; it is kept sealed and never shown." }]
      : []),
    {
      kind: "p",
      text: `Nothing happens until you confirm. Once you do, the intent is active and we send you matching offers by e-mail. The link works until ${formatDate(data.confirmExpiresAt)}.`,
    },
    { kind: "action", label: "Confirm this intent", url: data.confirmUrl },
    {
      kind: "p",
      text: "If this was not you, ignore this e-mail: without confirmation the intent ends on its own.",
    },
    footer(data),
  ]);
}

export function matchDigestMail(data: MatchDigestMailData): RenderedMail {
  const count = data.matches.length + data.more;
  const subject = count === 1 ? "A new offer for your intent" : `${count} new offers for your intent`;
  const items = data.matches.map((match) => {
    const url = safeUrl(match.url);
    return {
      title: match.title,
      lines: [formatMoney(match.price), formatArea(match.location)],
      ...(url === undefined ? {} : { url }),
    };
  });
  return render(subject, [
    { kind: "p", text: `${data.holderName} found offers that match your intent:` },
    { kind: "quote", text: data.statement },
    { kind: "items", items },
    ...(data.more > 0 ? [{ kind: "p" as const, text: `…and ${data.more} more on your manage page.` }] : []),
    footer(data),
  ]);
}

export function withdrawnMail(data: WithdrawnMailData): RenderedMail {
  return render("Your intent was withdrawn", [
    { kind: "p", text: `This intent was withdrawn at ${formatDate(data.withdrawnAt)}:` },
    { kind: "quote", text: data.statement },
    {
      kind: "p",
      text: `${data.holderName} sends no more offers for it, and your e-mail address is no longer kept for it. If you did not withdraw it yourself, the assistant that published it did.`,
    },
    footer(data),
  ]);
}

export interface NotificationApprovalMailData extends MailCommon {
  /** The host the holder would ring (push profile §6 rule 3). */
  deliveryHost: string;
  /** Through a forwarder: the host it relays to (§7 rule 3). */
  relayFor?: string;
  approveUrl: string;
}

/** What the agent learns from a doorbell, in the person's words (§6 rule 3). */
export const NOTIFICATION_PROMISE =
  "The assistant learns only that there are new offers or that the intent's status changed, never which offers; it reads them itself with its own code.";

/** Push profile §6 rule 3: the approval link goes to the verified channel, never to the agent. */
export function notificationApprovalMail(data: NotificationApprovalMailData): RenderedMail {
  const who =
    data.relayFor === undefined
      ? `the address ${data.deliveryHost}`
      : `${data.relayFor}, relayed through ${data.deliveryHost}`;
  return render("Allow an assistant to be notified about your intent?", [
    {
      kind: "p",
      text: `An assistant asked ${data.holderName} to notify ${who} when something changes for this intent:`,
    },
    { kind: "quote", text: data.statement },
    { kind: "p", text: NOTIFICATION_PROMISE },
    {
      kind: "p",
      text: "Nothing is sent until you allow it, and you can stop it at any time from the manage page.",
    },
    { kind: "action", label: "Review and allow notifications", url: data.approveUrl },
    footer(data),
  ]);
}
