import { WebhookError } from "../errors.js";

// Framing and routing headers belong to the egress: a caller setting them could smuggle a
// second request, talk to another virtual host or reach a proxy.
const RESERVED = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-authorization",
  "proxy-connection",
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;

/**
 * The headers sent: exactly the caller's, plus `content-type: application/json` unless the
 * caller chose one. Nothing else is added, so no cookie or credential is ever sent on its own.
 */
export const outgoingHeaders = (given: Readonly<Record<string, string>> = {}): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name))
      throw new WebhookError("ERR_EGRESS_POLICY", "a header name is not a valid HTTP token");
    if (RESERVED.has(lower)) {
      throw new WebhookError(
        "ERR_EGRESS_POLICY",
        `the ${lower} header is set by the egress, not by the caller`,
      );
    }
    if (typeof value !== "string" || UNSAFE_VALUE.test(value)) {
      throw new WebhookError("ERR_EGRESS_POLICY", `the ${lower} header value is not a single-line string`);
    }
    if (lower in headers) throw new WebhookError("ERR_EGRESS_POLICY", `the ${lower} header is given twice`);
    headers[lower] = value;
  }
  headers["content-type"] ??= "application/json";
  return headers;
};
