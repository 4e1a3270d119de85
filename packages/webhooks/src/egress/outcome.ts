import { EgressRefusal, ResolutionFailure } from "./refusal.js";

/**
 * Why a delivery did not succeed. Server-generated words only: nothing the endpoint sent
 * (body, headers, status text, certificate names) ever goes into a category or reason.
 */
export type EgressCategory =
  | "blocked_url"
  | "blocked_address"
  | "dns_error"
  | "connection_refused"
  | "connection_error"
  | "timeout"
  | "tls_error"
  | "aborted"
  | "http_3xx"
  | "http_4xx"
  | "http_5xx"
  | "http_unexpected";

export const REASONS: Record<Exclude<EgressCategory, "blocked_url" | "blocked_address">, string> = {
  dns_error: "the host name could not be resolved",
  connection_refused: "the endpoint refused the connection",
  connection_error: "the connection failed or was closed before an answer",
  timeout: "the endpoint did not answer in time",
  tls_error: "the endpoint's TLS certificate or handshake was not accepted",
  aborted: "the delivery was cancelled by the caller",
  http_3xx: "the endpoint answered with a redirect, which is never followed",
  http_4xx: "the endpoint answered with a client error status",
  http_5xx: "the endpoint answered with a server error status",
  http_unexpected: "the endpoint answered with an unexpected status",
};

export type HttpCategory = "http_3xx" | "http_4xx" | "http_5xx" | "http_unexpected";

/** undefined for 2xx (success); every other status is a failure, 3xx included. */
export const categoryOfStatus = (status: number): HttpCategory | undefined => {
  if (status >= 200 && status < 300) return undefined;
  if (status >= 300 && status < 400) return "http_3xx";
  if (status >= 400 && status < 500) return "http_4xx";
  if (status >= 500 && status < 600) return "http_5xx";
  return "http_unexpected";
};

const TIMEOUT_CODES = new Set([
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
const DNS_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EAI_NODATA",
  "ENODATA",
  "ESERVFAIL",
]);
// Node's own TLS codes and OpenSSL's certificate verification codes.
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|INVALID_CA)/;

/** The error itself, its `cause` chain and an AggregateError's members (Happy Eyeballs). */
const related = (error: unknown, depth = 0): unknown[] => {
  if (error === null || typeof error !== "object" || depth > 4) return [];
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  const members = Array.isArray(errors) ? errors.flatMap((e) => related(e, depth + 1)) : [];
  return [error, ...related(cause, depth + 1), ...members];
};

/** Maps whatever undici, Node or the guard threw to a category and a plain-words reason. */
export const categoriseError = (
  error: unknown,
  state: { callerAborted: boolean; deadlinePassed: boolean },
): { category: EgressCategory; reason: string } => {
  const chain = related(error);
  const refusal = chain.find((e) => e instanceof EgressRefusal);
  if (refusal) return { category: refusal.category, reason: refusal.message };
  const outcome = (category: Exclude<EgressCategory, "blocked_url" | "blocked_address">) => ({
    category,
    reason: REASONS[category],
  });
  if (state.callerAborted) return outcome("aborted");
  if (state.deadlinePassed) return outcome("timeout");
  if (chain.some((e) => e instanceof ResolutionFailure)) return outcome("dns_error");
  const codes = chain
    .map((e) => (e as { code?: unknown }).code)
    .filter((c): c is string => typeof c === "string");
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return outcome("timeout");
  if (codes.includes("ECONNREFUSED")) return outcome("connection_refused");
  if (codes.some((c) => DNS_CODES.has(c))) return outcome("dns_error");
  if (codes.some((c) => TLS_CODE.test(c))) return outcome("tls_error");
  return outcome("connection_error");
};
