/**
 * Text that someone other than the holder chose (an assistant's client_name and redirect hosts,
 * an intent's statement as the assistant wrote it, a doorbell endpoint's host, a seller's offer
 * title, a library's error description that quotes a request) is shown to a person, in a mail or
 * on a page, as quoted data only: capped in length, control and bidi characters out, and defanged
 * so that no mail client or browser turns it into a link and no one can copy it as one —
 * `https://x.example` becomes `https[:]//x[.]example`. The holder's own links never pass here.
 * One helper for mails and pages, so both show the same words the same way.
 */

/** The longest quote a mail carries. */
export const MAX_QUOTE_CHARS = 1000;
/** The longest client name (or other one-line text) a mail or page shows (registration caps it too). */
export const MAX_NAME_CHARS = 100;

const CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** The dots a browser takes as a host's dot: ASCII, ideographic, full-width and half-width. */
const DOT = "[.\u3002\uFF0E\uFF61]";
const DOMAIN_DOT = new RegExp(`([\\p{L}\\p{N}_-])${DOT}(?=\\p{L})`, "gu");
const IPV4 = new RegExp(`\\b(\\d{1,3})${DOT}(\\d{1,3})${DOT}(\\d{1,3})${DOT}(\\d{1,3})\\b`, "gu");

/**
 * Breaks what a mail client or a browser would take as a link: schemes, domain-like dots (`www.`
 * too), dotted IPv4 addresses and `@`. Numbers such as `2.0` stay as they are.
 */
export function defang(text: string): string {
  return text
    .replace(/:\/\//g, "[:]//")
    .replace(DOMAIN_DOT, "$1[.]")
    .replace(IPV4, "$1[.]$2[.]$3[.]$4")
    .replace(/@/g, "[at]");
}

function cap(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** A multi-line quote: lines kept, other control characters dropped, capped, defanged. */
export function quoteText(text: string, max = MAX_QUOTE_CHARS): string {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(CONTROL, "").trimEnd());
  return defang(cap(lines.join("\n").trim(), max));
}

/** A one-line name (an assistant's client_name, a host, a title): whitespace collapsed, capped, defanged. */
export function quoteName(text: string, max = MAX_NAME_CHARS): string {
  return defang(cap(text.replace(CONTROL, " ").replace(/\s+/g, " ").trim(), max));
}
