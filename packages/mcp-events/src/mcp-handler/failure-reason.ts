import type { ExperimentalMcpWebhookFailure } from "mcp-handler";
import { failureCategory } from "../server/failure-category.js";

/** The reason `mcp-handler` accepts for a delivery failure category (one of the same six). */
export function failureReason(category: string | null | undefined): ExperimentalMcpWebhookFailure {
  return failureCategory(category) ?? "challenge_failed";
}
