/**
 * The operator's webhook for operational events (`endpoint.disabled`, `endpoint.recovered`,
 * `delivery.exhausted`; the delivery engine's operator-events.ts): configured by each serving
 * process at start. Without a secret given, the one the database keeps is used; a new one is
 * generated once and written beside the seal keys, where the operator reads it to verify.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { DeliveryEngine } from "@doorbell/delivery";
import { writeFileAtomically } from "@doorbell/webhooks";

/** What `CreateHolderOptions.delivery` takes for endpoint health and the operator's webhook. */
export interface EndpointHealthDelivery {
  /** Failing every attempt this long disables an endpoint (default 5 days). */
  endpointDisableAfterMs?: number;
  /** Where operational events go; without it none are sent (they are still counted in /metrics). */
  operatorWebhook?: { url: string; secret?: string };
}

export interface OperatorWebhookSummary {
  /** The webhook's origin (its path may carry a token of the operator's: never printed). */
  origin: string;
  /** given: by the operator; kept: from an earlier start; generated: new, written to `secretFile`. */
  secret: "given" | "kept" | "generated";
  secretFile?: string;
}

export const OPERATOR_SECRET_FILE = "operator-webhook-secret";

/** Points the engine's operational events at the configured webhook, or stops them. */
export async function configureHolderOperatorWebhook(
  delivery: DeliveryEngine,
  options: EndpointHealthDelivery | undefined,
  dataDir: string,
): Promise<OperatorWebhookSummary | undefined> {
  const webhook = options?.operatorWebhook;
  const configured = await delivery.configureOperatorWebhook(webhook);
  if (webhook === undefined || configured === undefined) return undefined;
  const origin = new URL(webhook.url).origin;
  if (!configured.generated) return { origin, secret: webhook.secret === undefined ? "kept" : "given" };
  const secretFile = path.join(dataDir, OPERATOR_SECRET_FILE);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFileAtomically(secretFile, `${configured.secret}\n`, { mode: 0o600 });
  return { origin, secret: "generated", secretFile };
}
