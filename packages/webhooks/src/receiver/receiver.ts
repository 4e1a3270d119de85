import { createHash } from "node:crypto";
import { WebhookError, type WebhookErrorCode } from "../errors.js";
import { createMcpVerifier, readSubscriptionId } from "../mcp/verify.js";
import { createStandardVerifier } from "../standard/verify.js";
import { type Clock, systemClock } from "../timestamp.js";
import { readBodyCapped } from "./body.js";
import { type ChallengeRequest, readChallenge } from "./challenge.js";
import { createMemoryDedupStore, type DedupStore } from "./dedup.js";

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
/** Push profile §6 rule 4: an id processed in the last 10 minutes is not processed again. */
export const DEFAULT_REPLAY_WINDOW_SECONDS = 600;

export interface ReceiverKeys {
  secrets?: readonly string[];
  publicKeys?: readonly string[];
}

/** `"gone"` answers 410 (the sender ends the subscription); `undefined` answers 503 (try again later). */
export type KeyLookup = (
  request: Request,
  hint: { subscriptionId?: string },
) => ReceiverKeys | "gone" | undefined | Promise<ReceiverKeys | "gone" | undefined>;

export interface ReceivedWebhook {
  scheme: "standard" | "mcp";
  /** The idempotency key: webhook-id, or for MCP Events subscription id + eventId. */
  id: string;
  timestamp: number;
  subscriptionId?: string;
  /** The exact bytes received. */
  body: Uint8Array;
  /** The body parsed as JSON, after the signature verified. */
  json: unknown;
  headers: Headers;
}

export interface ReceiverOptions {
  /** `standard` (webhook-* headers, push profile) or `mcp` (X-MCP-* headers, MCP Events sketch). */
  scheme?: "standard" | "mcp";
  keys: ReceiverKeys | KeyLookup;
  /** Runs at most once per id; the sender gets 2xx only after it resolves. */
  handler: (event: ReceivedWebhook) => void | Promise<void>;
  /** Decides whether to answer an endpoint challenge; answers every verified challenge by default. */
  onChallenge?: (challenge: ChallengeRequest, request: Request) => boolean | Promise<boolean>;
  dedup?: DedupStore;
  maxBodyBytes?: number;
  toleranceSeconds?: number;
  replayWindowSeconds?: number;
  /** How long a claimed id stays locked while its handler runs. */
  handlerLeaseSeconds?: number;
  clock?: Clock;
}

export type Receiver = (request: Request) => Promise<Response>;

type Verify = (
  headers: Headers,
  body: Uint8Array,
) => { id?: string; timestamp: number; subscriptionId?: string };

/**
 * A web-standard webhook endpoint: size limit, signature, timestamp window, challenge, then the
 * handler exactly once per id. Every refusal says in plain words what was wrong.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const scheme = options.scheme ?? "standard";
  const clock = options.clock ?? systemClock;
  const dedup = options.dedup ?? createMemoryDedupStore();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const windowMs = (options.replayWindowSeconds ?? DEFAULT_REPLAY_WINDOW_SECONDS) * 1000;
  const leaseMs = (options.handlerLeaseSeconds ?? 60) * 1000;
  const verifierFor = (keys: ReceiverKeys): Verify =>
    buildVerify(scheme, keys, options.toleranceSeconds, clock);
  const staticVerify = typeof options.keys === "function" ? undefined : verifierFor(options.keys);

  return async (request) => {
    if (request.method !== "POST") {
      return json(
        405,
        { error: "ERR_WEBHOOK_METHOD", message: "webhooks are delivered with POST" },
        { allow: "POST" },
      );
    }
    try {
      const body = await readBodyCapped(request, maxBody);
      if (!body) {
        throw new WebhookError("ERR_WEBHOOK_BODY_TOO_LARGE", `the body is larger than ${maxBody} bytes`);
      }
      let verify = staticVerify;
      if (!verify) {
        const hint = scheme === "mcp" ? { subscriptionId: readSubscriptionId(request.headers) } : {};
        const keys = await (options.keys as KeyLookup)(request, hint);
        if (keys === "gone")
          return json(410, refusal("ERR_WEBHOOK_UNKNOWN_SUBSCRIPTION", "this subscription has ended"));
        if (!keys)
          return json(
            503,
            refusal("ERR_WEBHOOK_UNKNOWN_SUBSCRIPTION", "not ready for this subscription yet"),
          );
        verify = verifierFor(keys);
      }
      const verified = verify(request.headers, body);
      const parsed = parseJson(body);

      const challenge = readChallenge(parsed);
      if (challenge) {
        const accept = options.onChallenge ? await options.onChallenge(challenge, request) : true;
        if (!accept)
          return json(403, refusal("ERR_WEBHOOK_CHALLENGE_REFUSED", "this endpoint does not want it"));
        return json(200, { challenge: challenge.challenge });
      }

      const id = verified.id ?? mcpIdempotencyKey(verified.subscriptionId ?? "", parsed, body);
      const event: ReceivedWebhook = {
        scheme,
        id,
        timestamp: verified.timestamp,
        body,
        json: parsed,
        headers: request.headers,
        ...(verified.subscriptionId ? { subscriptionId: verified.subscriptionId } : {}),
      };
      return await runOnce(event);
    } catch (error) {
      // A full webhook-id store is the receiver's own trouble, not the sender's: busy, retry later.
      if (error instanceof WebhookError && error.code === "ERR_WEBHOOK_DEDUP_FULL") {
        return json(503, refusal("ERR_WEBHOOK_BUSY", "too many webhooks in the replay window"), {
          "retry-after": "60",
        });
      }
      if (error instanceof WebhookError)
        return json(statusOf(error.code), refusal(error.code, error.message));
      throw error;
    }
  };

  async function runOnce(event: ReceivedWebhook): Promise<Response> {
    const claim = await dedup.claim(event.id, clock(), leaseMs);
    if (claim === "processed") return json(200, { status: "duplicate", id: event.id });
    if (claim === "processing") {
      return json(409, refusal("ERR_WEBHOOK_BUSY", "this webhook-id is being processed"), {
        "retry-after": "5",
      });
    }
    try {
      await options.handler(event);
    } catch {
      await dedup.release(event.id);
      // The handler's error stays here: the sender learns only that it may retry.
      return json(500, refusal("ERR_WEBHOOK_HANDLER_FAILED", "the handler failed; retry later"));
    }
    await dedup.complete(event.id, clock(), windowMs);
    return json(200, { status: "processed", id: event.id });
  }
}

function buildVerify(
  scheme: "standard" | "mcp",
  keys: ReceiverKeys,
  toleranceSeconds: number | undefined,
  clock: Clock,
): Verify {
  const common = { clock, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) };
  if (scheme === "mcp") {
    const verifier = createMcpVerifier({ secrets: keys.secrets ?? [], ...common });
    return (headers, body) => verifier.verify(headers, body);
  }
  const verifier = createStandardVerifier({ ...keys, ...common });
  return (headers, body) => verifier.verify(headers, body);
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new WebhookError(
      "ERR_WEBHOOK_INVALID_BODY",
      "the signature verified but the body is not UTF-8 JSON",
    );
  }
}

/** MCP sketch deliveries carry no id header: dedup by eventId, or by the body for error envelopes. */
function mcpIdempotencyKey(subscriptionId: string, parsed: unknown, body: Uint8Array): string {
  const eventId = (parsed as { eventId?: unknown } | null)?.eventId;
  if (typeof eventId === "string" && eventId.length > 0 && eventId.length <= 256) {
    return `${subscriptionId}:${eventId}`;
  }
  return `${subscriptionId}:sha256:${createHash("sha256").update(body).digest("hex")}`;
}

function statusOf(code: WebhookErrorCode): number {
  switch (code) {
    case "ERR_WEBHOOK_BODY_TOO_LARGE":
      return 413;
    case "ERR_WEBHOOK_TIMESTAMP_TOO_OLD":
    case "ERR_WEBHOOK_TIMESTAMP_TOO_NEW":
    case "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE":
    case "ERR_WEBHOOK_SIGNATURE_MISMATCH":
      return 401;
    default:
      return 400;
  }
}

function refusal(code: string, message: string) {
  return { error: code, message };
}

function json(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
