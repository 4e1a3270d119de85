import type { ExperimentalMcpWebhookFailure } from "mcp-handler";

/** Delivery's failure categories folded into the six `mcp-handler` accepts; nothing else leaks. */
const REASON: Record<string, ExperimentalMcpWebhookFailure> = {
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

export function failureReason(category: string | null | undefined): ExperimentalMcpWebhookFailure {
  return (category && REASON[category]) || "challenge_failed";
}
