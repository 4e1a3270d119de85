import { CodedError } from "@doorbell/errors";
import { WebhookError } from "../errors.js";

/**
 * Thrown inside the connector when the policy refuses a destination. It travels through
 * undici unchanged, so the egress can tell a refusal from a network failure by its class.
 */
export class EgressRefusal extends WebhookError {
  readonly category: "blocked_url" | "blocked_address";

  constructor(category: "blocked_url" | "blocked_address", reason: string) {
    super("ERR_EGRESS_POLICY", reason);
    this.category = category;
  }
}

/**
 * A resolver failure, tagged so it is reported as `dns_error` whatever the resolver threw. It goes
 * to Node's lookup callback, whose contract is an errno-style `code` (ENOTFOUND, EAI_AGAIN), so its
 * code is the resolver's and not one of WebhookError's; it never leaves the egress.
 */
export class ResolutionFailure extends CodedError {
  override readonly name = "ResolutionFailure";

  constructor(code: string) {
    super(code, "the host name could not be resolved");
  }
}
