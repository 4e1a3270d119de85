/**
 * `POST /relay/:path` — where the holder rings (push profile §7 rule 4).
 *
 * The record is found by the keyed hash of the path. The request is verified by `createReceiver`
 * with the forwarder's secret towards the holder (±300 s, constant-time, a webhook-id replayed in
 * the window is not processed again), which also answers the holder's challenge. A verified
 * doorbell whose `data` has exactly its type's fields becomes a new doorbell to the agent — the
 * forwarder's subscriptionId, a new webhook-id, the agent's secret — queued in the delivery engine
 * (FIFO, retries, coalescing off) in the same transaction that records the holder's webhook-id,
 * so a retry after a lost answer is never relayed twice.
 *
 * Answers: 410 when the relay or the agent's subscription has ended (the holder then ends its own,
 * §6 rule 5: with the end request, holder-ends.ts, it has usually ended already; this is the way
 * left for a holder that does not take end requests, and this checks the agent's side itself);
 * 422 for a verified doorbell that is not one we relay; 503 while the holder's subscriptionId is
 * not yet recorded (its first doorbell raced our subscribe call); the receiver's own 4xx otherwise.
 */
import { createMemoryDedupStore, createReceiver, type DedupStore } from "@doorbell/webhooks";
import { deliveryDb, type ForwarderContext } from "./context.js";
import { ForwarderError, type ForwarderErrorCode } from "./errors.js";
import { agentData, type RelayedEvent, readRelayedEvent } from "./relay-event.js";
import { endRelay, forgetHolderSide, holderSecrets, RELAY_PATH, relayByPath } from "./relays.js";
import type { RelayRow } from "./schema.js";

export const RELAY_PREFIX = "/relay/";

export type RelayEndpoint = (request: Request, path: string) => Promise<Response>;

/** How the holder is answered when the receiver's handler refuses a doorbell. */
const REFUSALS: Partial<Record<ForwarderErrorCode, { status: number; headers?: Record<string, string> }>> = {
  ERR_FORWARDER_NOT_RELAYED: { status: 422 },
  // The holder's sender retries after it, by which time the relay is set up.
  ERR_FORWARDER_NOT_READY: { status: 503, headers: { "retry-after": "5" } },
};

const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/** One dedup store for every relay; keys are scoped by relay, since two holders may reuse an id. */
function scoped(store: DedupStore, relayId: string): DedupStore {
  return {
    claim: (key, now, leaseMs) => store.claim(`${relayId}:${key}`, now, leaseMs),
    complete: (key, now, windowMs) => store.complete(`${relayId}:${key}`, now, windowMs),
    release: (key) => store.release(`${relayId}:${key}`),
  };
}

export function createRelayEndpoint(
  ctx: Pick<ForwarderContext, "store" | "sealer" | "hashers" | "engine" | "clock" | "log">,
  options: { dedup?: DedupStore } = {},
): RelayEndpoint {
  const dedup = options.dedup ?? createMemoryDedupStore();

  async function agentEnded(row: RelayRow): Promise<string | undefined> {
    if (row.status === "ended") return row.ended_reason ?? "ended";
    try {
      const sub = await ctx.engine.get(deliveryDb(ctx.store.db), row.agent_subscription_id);
      return sub.status === "ended" ? (sub.endedReason ?? "ended") : undefined;
    } catch {
      return "purged";
    }
  }

  async function relay(row: RelayRow, webhookId: string, body: unknown): Promise<void> {
    const event = readRelayedEvent(body);
    if ("problem" in event) throw new ForwarderError("ERR_FORWARDER_NOT_RELAYED", event.problem);
    if (row.holder_subscription_id === null) {
      throw new ForwarderError("ERR_FORWARDER_NOT_READY", "the subscription is still being set up");
    }
    if (event.subscriptionId !== row.holder_subscription_id) {
      throw new ForwarderError(
        "ERR_FORWARDER_NOT_RELAYED",
        "data.subscriptionId is not this relay's subscription",
      );
    }
    await forward(row, webhookId, event);
  }

  async function forward(row: RelayRow, webhookId: string, event: RelayedEvent): Promise<void> {
    const id = row.agent_subscription_id;
    const now = ctx.clock();
    await ctx.store.transaction(async (trx) => {
      const fresh = await trx
        .insertInto("forwarder_relay_seen")
        .values({ agent_subscription_id: id, webhook_id: webhookId, seen_at: now })
        .onConflict((oc) => oc.columns(["agent_subscription_id", "webhook_id"]).doNothing())
        .returning("webhook_id")
        .execute();
      if (fresh.length === 0) return; // relayed before; the holder's answer was lost
      if (event.type === "subscription.ended") {
        // §7 rule 6: the holder's end is the agent's end, with the same reason.
        await ctx.engine.end(deliveryDb(trx), id, event.reason, { notify: true });
        await endRelay(trx, id, event.reason, now);
        // The holder's side has ended: no end request goes back for it.
        await forgetHolderSide(trx, id);
        return;
      }
      await ctx.engine.enqueue(deliveryDb(trx), id, {
        type: event.type,
        timestamp: event.timestamp,
        data: agentData(event, id),
      });
    });
    ctx.log.debug({ event: "forwarder.relayed", type: event.type }, "doorbell relayed");
  }

  return async (request, path) => {
    if (!RELAY_PATH.test(path))
      return json(404, { error: "ERR_FORWARDER_UNKNOWN_RELAY", message: "no such relay" });
    const row = await relayByPath(ctx, path);
    // An unknown path is a relay purged after it ended (or never made): 410 ends the sender's side.
    if (row === undefined)
      return json(410, { error: "ERR_FORWARDER_GONE", message: "this subscription has ended" });
    const ended = await agentEnded(row);
    if (ended !== undefined) {
      if (row.status !== "ended") await endRelay(ctx.store.db, row.agent_subscription_id, ended, ctx.clock());
      return json(410, { error: "ERR_FORWARDER_GONE", message: "this subscription has ended" });
    }
    let refusal: ForwarderError | undefined;
    const receiver = createReceiver({
      keys: { secrets: holderSecrets(ctx, row) },
      dedup: scoped(dedup, row.agent_subscription_id),
      clock: ctx.clock,
      handler: async (event) => {
        try {
          await relay(row, event.id, event.json);
        } catch (error) {
          if (error instanceof ForwarderError) refusal = error;
          else
            ctx.log.error(
              { event: "forwarder.relay_failed", error: error instanceof Error ? error.name : typeof error },
              error instanceof Error ? error.message.slice(0, 200) : "relaying failed",
            );
          throw error;
        }
      },
    });
    const response = await receiver(request);
    const answer = refusal === undefined ? undefined : REFUSALS[refusal.code];
    if (refusal !== undefined && answer !== undefined) {
      return json(answer.status, { error: refusal.code, message: refusal.message }, answer.headers);
    }
    return response;
  };
}
