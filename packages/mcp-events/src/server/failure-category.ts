/**
 * The six categories a `deliveryStatus.lastError` or a CallbackEndpointError's reason may be
 * (the sketch and SEP-3415), folded from the delivery engine's failure categories; nothing else
 * leaks (never an endpoint's words). Undefined for a category with no place among them.
 */
export type FailureCategory =
  | "connection_refused"
  | "timeout"
  | "tls_error"
  | "http_4xx"
  | "http_5xx"
  | "challenge_failed";

const FOLDED: Record<string, FailureCategory> = {
  connection_refused: "connection_refused",
  connection_error: "connection_refused",
  dns_error: "connection_refused",
  blocked_url: "connection_refused",
  blocked_address: "connection_refused",
  timeout: "timeout",
  aborted: "timeout",
  tls_error: "tls_error",
  http_3xx: "http_4xx",
  http_4xx: "http_4xx",
  http_5xx: "http_5xx",
  challenge_failed: "challenge_failed",
  wrong_answer: "challenge_failed",
};

export function failureCategory(category: string | null | undefined): FailureCategory | undefined {
  return category ? FOLDED[category] : undefined;
}
