/**
 * RFC 8058 one-click unsubscribe headers for every mail about an intent. They name the manage
 * URL's `/unsubscribe` action, served by the one-click page (push/one-click-unsubscribe.ts); the
 * mails and the renewal offer only need the headers, so they live here with the other mail parts.
 */
export const UNSUBSCRIBE_PATH_SUFFIX = "/unsubscribe";
/** The body a one-click POST carries (RFC 8058 section 3.1). */
export const ONE_CLICK = "List-Unsubscribe=One-Click";

/** The RFC 8058 headers of a mail whose manage link is `manageUrl`. */
export function listUnsubscribeHeaders(manageUrl: string): Record<string, string> {
  return {
    "List-Unsubscribe": `<${manageUrl}${UNSUBSCRIBE_PATH_SUFFIX}>`,
    "List-Unsubscribe-Post": ONE_CLICK,
  };
}
