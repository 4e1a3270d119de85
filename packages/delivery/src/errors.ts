import { CodedError } from "@doorbell/errors";

export type DeliveryErrorCode =
  | "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION"
  | "ERR_DELIVERY_SUBSCRIPTION_ENDED"
  | "ERR_DELIVERY_INVALID_EVENT"
  | "ERR_DELIVERY_INVALID_SUBSCRIPTION"
  | "ERR_DELIVERY_CONFIG"
  | "ERR_DELIVERY_UNKNOWN_DEAD_LETTER"
  | "ERR_DELIVERY_ALREADY_REPLAYED";

/** The delivery engine's one error class: a stable code and plain words, never a secret or URL. */
export class DeliveryError extends CodedError<DeliveryErrorCode> {
  override readonly name = "DeliveryError";
}
