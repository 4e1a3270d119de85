import { UsageError } from "./io.js";

export interface SavedRequest {
  headers: Headers;
  body: Uint8Array;
  /** Set when trailing bytes past Content-Length were dropped (editors add a final newline). */
  trimmedBytes: number;
}

const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/\d(?:\.\d)?$/;

/**
 * Parses a request as it arrived on the wire (an optional request line, header lines, a blank
 * line, then the body bytes untouched), e.g. a capture from `nc -l` or a proxy's raw dump.
 */
export function parseSavedRequest(raw: Uint8Array): SavedRequest {
  const buffer = Buffer.from(raw);
  const crlf = buffer.indexOf("\r\n\r\n");
  const lf = buffer.indexOf("\n\n");
  const useCrlf = crlf >= 0 && (lf < 0 || crlf < lf);
  const split = useCrlf ? crlf : lf;
  if (split < 0) throw new UsageError("the saved request has no blank line between its headers and its body");
  const head = buffer.subarray(0, split).toString("latin1");
  let body: Uint8Array = buffer.subarray(split + (useCrlf ? 4 : 2));
  const headers = new Headers();
  const lines = head.split(useCrlf ? "\r\n" : "\n");
  lines.forEach((line, index) => {
    if (index === 0 && REQUEST_LINE.test(line)) return;
    const colon = line.indexOf(":");
    if (colon <= 0)
      throw new UsageError(
        `line ${index + 1} of the saved request is not "Name: value": ${JSON.stringify(line.slice(0, 60))}`,
      );
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  });
  let trimmedBytes = 0;
  const declared = headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) < body.length) {
    trimmedBytes = body.length - Number(declared);
    body = body.subarray(0, Number(declared));
  }
  return { headers, body, trimmedBytes };
}
