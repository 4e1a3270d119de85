/**
 * Text that someone other than the holder wrote (an assistant's client_name, an intent's
 * statement) goes into mails as quoted data only: capped in length, control
 * characters out, and defanged so that no mail client turns it into a link — `https://x.example`
 * becomes `https[:]//x[.]example`. The holder's own links are never passed through here.
 */

/** The longest quote a mail carries. */
export const MAX_QUOTE_CHARS = 1000;
/** The longest client name a mail or page shows (registration caps it too). */
export const MAX_NAME_CHARS = 100;

const CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** Breaks what a mail client would make a link: schemes, domain-like dots, `www.` and `@`. */
export function defang(text: string): string {
  return text
    .replace(/:\/\//g, "[:]//")
    .replace(/([\p{L}\p{N}_-])\.(?=\p{L})/gu, "$1[.]")
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

/** A one-line name (an assistant's client_name): whitespace collapsed, capped, defanged. */
export function quoteName(text: string, max = MAX_NAME_CHARS): string {
  return defang(cap(text.replace(CONTROL, " ").replace(/\s+/g, " ").trim(), max));
}
