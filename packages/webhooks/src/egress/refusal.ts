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

/** A resolver failure, tagged so it is reported as `dns_error` whatever the resolver threw. */
export class ResolutionFailure extends Error {
  readonly code: string;

  constructor(code: string) {
    super("the host name could not be resolved");
    this.name = "ResolutionFailure";
    this.code = code;
  }
}
