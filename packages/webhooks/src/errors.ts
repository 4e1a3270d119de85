import { CodedError } from "@doorbell/errors";

/** Stable codes, one per way a webhook can be refused. Messages are plain words and never carry a secret. */
export type WebhookErrorCode =
  | "ERR_WEBHOOK_INVALID_SECRET"
  | "ERR_WEBHOOK_INVALID_KEY"
  | "ERR_WEBHOOK_MISSING_HEADER"
  | "ERR_WEBHOOK_DUPLICATE_HEADER"
  | "ERR_WEBHOOK_INVALID_ID"
  | "ERR_WEBHOOK_INVALID_TIMESTAMP"
  | "ERR_WEBHOOK_TIMESTAMP_TOO_OLD"
  | "ERR_WEBHOOK_TIMESTAMP_TOO_NEW"
  | "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE"
  | "ERR_WEBHOOK_SIGNATURE_MISMATCH"
  | "ERR_WEBHOOK_BODY_TOO_LARGE"
  | "ERR_WEBHOOK_REPLAYED"
  | "ERR_WEBHOOK_INVALID_BODY"
  | "ERR_WEBHOOK_UNKNOWN_SUBSCRIPTION"
  | "ERR_WEBHOOK_HANDLER_FAILED"
  | "ERR_WEBHOOK_BUSY"
  /** The in-memory webhook-id store holds its maximum; the receiver answers 503 and asks to retry. */
  | "ERR_WEBHOOK_DEDUP_FULL"
  | "ERR_EGRESS_POLICY";

export class WebhookError extends CodedError<WebhookErrorCode> {
  override readonly name = "WebhookError";
  /** One plain line per thing that was checked and failed (e.g. per signature tried); never secret material. */
  readonly details: readonly string[];

  constructor(code: WebhookErrorCode, message: string, details: readonly string[] = []) {
    super(code, message);
    this.details = details;
  }
}

export const isWebhookError = (value: unknown): value is WebhookError => value instanceof WebhookError;
