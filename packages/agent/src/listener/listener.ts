/**
 * The doorbell endpoint: one path per local subscription (…/<localId>), each verified with that
 * subscription's secrets (the current one and, during a renewal, the previous one) by the
 * @doorbell/webhooks receiver — ±300 s, constant-time signatures, each webhook-id processed once
 * within 10 minutes, remembered across restarts. Challenges are answered only for subscriptions
 * this agent made; a body with anything §5 does not allow is refused with 400 and the reason.
 */
import {
  type ChallengeRequest,
  createReceiver,
  type DedupStore,
  type ReceiverKeys,
  toNodeHandler,
} from "@doorbell/webhooks";
import { type Clock, systemClock } from "../clock.js";
import { AgentError } from "../errors.js";
import type { StateBox } from "../state/box.js";
import { createPersistentDedup } from "../state/dedup.js";
import type { LocalSubscription, WatchState } from "../state/schema.js";
import { type Doorbell, parseDoorbell } from "./doorbell.js";

export interface DoorbellListenerOptions {
  box: StateBox;
  /** Runs once per verified, well-formed doorbell; throwing answers 500, so the holder retries. */
  onDoorbell: (watch: WatchState, doorbell: Doorbell) => Promise<void>;
  /** Runs when this listener proves the endpoint for one of its subscriptions (rule 2). */
  onChallengeAnswered?: (watch: WatchState) => Promise<void>;
  clock?: Clock;
  /** Default: the webhook-ids kept in the state (survives a restart). */
  dedup?: DedupStore;
}

export interface DoorbellListener {
  /** Web-standard: mount on Hono, Deno, Bun, Workers… */
  fetch(request: Request): Promise<Response>;
  /** The same for node:http: `http.createServer(listener.node)`. */
  node: ReturnType<typeof toNodeHandler>;
}

export function createDoorbellListener(options: DoorbellListenerOptions): DoorbellListener {
  const clock = options.clock ?? systemClock;
  const dedup = options.dedup ?? createPersistentDedup(options.box);

  const fetch = async (request: Request): Promise<Response> => {
    const localId = lastSegment(new URL(request.url).pathname);
    const watch = localId === undefined ? undefined : findByLocalId(options.box, localId);
    const subscription = watch?.subscription;
    if (watch === undefined || subscription === undefined) {
      return json(404, {
        error: "ERR_AGENT_UNKNOWN_ENDPOINT",
        message: "no subscription of this agent uses this path",
      });
    }
    let refused: AgentError | undefined;
    const receiver = createReceiver({
      scheme: "standard",
      clock,
      dedup,
      keys: () => keysOf(subscription, clock()),
      onChallenge: async (challenge) => {
        if (!wantsChallenge(subscription, challenge)) return false;
        await options.onChallengeAnswered?.(watch);
        return true;
      },
      handler: async (event) => {
        let doorbell: Doorbell;
        try {
          doorbell = parseDoorbell(event.json);
          checkSubscription(subscription, doorbell);
        } catch (error) {
          refused = error as AgentError;
          throw error;
        }
        await options.onDoorbell(watch, doorbell);
      },
    });
    const response = await receiver(request);
    // The receiver turns any handler failure into 500 (retry); a malformed body will not get better.
    if (refused !== undefined) return json(400, { error: refused.code, message: refused.message });
    return response;
  };

  return { fetch, node: toNodeHandler(fetch) };
}

function keysOf(subscription: LocalSubscription, now: number): ReceiverKeys | "gone" {
  if (subscription.status === "ended") return "gone";
  const secrets = subscription.secrets
    .filter((entry) => entry.until === undefined || entry.until > now)
    .map((entry) => entry.secret);
  return secrets.length === 0 ? "gone" : { secrets };
}

/** Push profile §6 rule 2 from the endpoint's side: prove wanting only what this agent subscribed to. */
function wantsChallenge(subscription: LocalSubscription, challenge: ChallengeRequest): boolean {
  if (challenge.kind !== "push-profile" || subscription.status === "ended") return false;
  // While intent_subscribe_events is still answering, the holder's id is not known yet; the
  // signature with the secret made for this call is the proof.
  if (subscription.subscriptionId === undefined) return true;
  return challenge.subscriptionId === subscription.subscriptionId;
}

function checkSubscription(subscription: LocalSubscription, doorbell: Doorbell): void {
  const known = subscription.subscriptionId;
  if (known !== undefined && doorbell.data.subscriptionId !== known) {
    throw new AgentError(
      "ERR_AGENT_DOORBELL_INVALID",
      `this endpoint belongs to subscription ${known}, not ${JSON.stringify(doorbell.data.subscriptionId.slice(0, 80))}`,
    );
  }
}

function findByLocalId(box: StateBox, localId: string): WatchState | undefined {
  for (const watch of Object.values(box.state.watches))
    if (watch.subscription?.localId === localId) return watch;
  return undefined;
}

function lastSegment(pathname: string): string | undefined {
  const segments = pathname.split("/").filter((segment) => segment !== "");
  return segments.at(-1);
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}
