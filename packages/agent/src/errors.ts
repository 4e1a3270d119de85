import { CodedError } from "@doorbell/errors";
/** Stable codes, one per way the agent SDK refuses or fails. Messages are plain words, never a secret or a code. */
export type AgentErrorCode =
  /** A value given to this SDK is malformed (an intentCode, a URL, a flag). */
  | "ERR_AGENT_INVALID_ARGUMENT"
  /** The holder's tool refused the arguments (schema or domain check); `holderCode` says which. */
  | "ERR_AGENT_INVALID_INPUT"
  /** No intent has this code (or it ended long ago). */
  | "ERR_AGENT_NOT_FOUND"
  | "ERR_AGENT_FORBIDDEN"
  /** The intent or subscription has ended. */
  | "ERR_AGENT_GONE"
  /** The holder limits calls from this client; `retryAfterSeconds` says how long to wait. */
  | "ERR_AGENT_RATE_LIMITED"
  /** Push profile §8.2: this intent was read too recently; `retryAt` says when it may be read. */
  | "ERR_AGENT_PULL_TOO_EARLY"
  /** The holder does not offer doorbells (no intent_subscribe_events tool). */
  | "ERR_AGENT_NO_PUSH"
  /** Any other refusal by the holder; its own words and `holderCode` are kept. */
  | "ERR_AGENT_HOLDER_REFUSED"
  /** The holder could not be reached or answered something that is not MCP. */
  | "ERR_AGENT_UNREACHABLE"
  /** The holder answered, but not in the shape the binding or the push profile defines. */
  | "ERR_AGENT_PROTOCOL"
  /** A doorbell body that push profile §5 does not allow. */
  | "ERR_AGENT_DOORBELL_INVALID"
  /** The local state file cannot be read or written. */
  | "ERR_AGENT_STATE"
  /** The app's own hook (onMatches, onStatus…) threw; matches are handed over again at the next read. */
  | "ERR_AGENT_HANDLER_FAILED"
  | "ERR_AGENT_CLOSED";

export interface AgentErrorDetails {
  /** The holder's own code (e.g. ERR_HOLDER_NOT_FOUND), when the holder refused. */
  holderCode?: string;
  retryAfterSeconds?: number;
  /** ERR_AGENT_PULL_TOO_EARLY: the first instant a read is allowed (epoch ms). */
  retryAt?: number;
}

export class AgentError extends CodedError<AgentErrorCode> {
  override readonly name = "AgentError";
  readonly holderCode: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly retryAt: number | undefined;

  constructor(code: AgentErrorCode, message: string, details: AgentErrorDetails = {}, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause });
    this.holderCode = details.holderCode;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.retryAt = details.retryAt;
  }
}

export const isAgentError = (value: unknown): value is AgentError => value instanceof AgentError;
