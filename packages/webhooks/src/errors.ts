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
  | "ERR_EGRESS_POLICY";

export class WebhookError extends Error {
  override readonly name = "WebhookError";
  readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const isWebhookError = (value: unknown): value is WebhookError => value instanceof WebhookError;
