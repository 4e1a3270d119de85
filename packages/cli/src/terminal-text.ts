/**
 * Text that reached the CLI from outside (a request's path, headers and body; a record's fields; an
 * endpoint's error) made safe to print, so the terminal shows it instead of obeying it.
 */

/** Control characters but newline and tab, C1 controls, and bidirectional marks and overrides. */
const unsafeForTerminal = (code: number) =>
  (code < 0x20 && code !== 0x0a && code !== 0x09) ||
  (code >= 0x7f && code <= 0x9f) ||
  code === 0x200e ||
  code === 0x200f ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

/**
 * Text from the network made safe to print: what a terminal would obey (escape sequences that
 * retitle, clear or write the clipboard; text that runs backwards) shown as \u escapes instead.
 */
export function forTerminal(text: string): string {
  let safe = "";
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    safe += unsafeForTerminal(code) ? `\\u${code.toString(16).padStart(4, "0")}` : char;
  }
  return safe;
}
