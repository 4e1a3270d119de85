/**
 * Push profile §7 rule 6 without the agent: when the agent's side ended on its own (its endpoint
 * answered 410, delivery failed, its lease ran out), the holder's side ends at once too. The
 * forwarder cannot call the holder's intent_unsubscribe_events then, since only the agent's code
 * opens the holder's (rule 1); it sends the holder's end request instead (`@doorbell/intents`
 * subscription-end.ts): signed with the secret it shares with the holder for that subscription,
 * the one the holder signs its doorbells to the relay with, and naming the holder's subscriptionId.
 *
 * One pass sends every end request that is due, each taken by one process first (relays.ts
 * `claimHolderEnd`), through the egress policy. A 2xx ends it; a holder that does not take end
 * requests (its descriptor names no end URL, or the URL is not there) or refuses one is left to
 * the way that always works: the relay answers its next doorbell 410, and the agent's next
 * subscribe unsubscribes it with the code. A failure to reach it is retried a few times.
 */
import { randomBytes } from "node:crypto";
import { subscriptionEndBody } from "@doorbell/intents";
import { createStandardSigner, type EgressResult, postWebhook } from "@doorbell/webhooks";
import type { ForwarderContext } from "./context.js";
import { createHolderEndUrlFinder, type HolderEndUrlFinder, retryableStatus } from "./holder-end-url.js";
import {
  claimHolderEnd,
  dueHolderEnds,
  forgetHolderSide,
  holderEndReason,
  holderSecrets,
  rescheduleHolderEnd,
} from "./relays.js";
import type { RelayRow } from "./schema.js";

/** After the first attempt: 5 s, 30 s, 2 min and 10 min later, then the holder's next doorbell. */
const RETRY_DELAYS_MS = [5_000, 30_000, 2 * 60_000, 10 * 60_000];
/** Longer than a descriptor read and a post under the policy's deadline: a crashed sender's rows come back. */
const CLAIM_MS = 60_000;
/** Sent side by side in one pass. */
const BATCH = 20;

type Ctx = Pick<ForwarderContext, "store" | "sealer" | "clock" | "log" | "policy" | "upstream">;

/** What one end request came to. */
type Outcome = "ended" | "retry" | "not-taken" | "taken-elsewhere";

/** One pass; resolves with how many holder sides it ended. */
export type HolderEnds = () => Promise<number>;

/** Whether the answer says the holder has no end request endpoint there (an older holder). */
const notTaken = (result: EgressResult): boolean =>
  result.status === 404 ||
  result.status === 405 ||
  result.status === 501 ||
  (!result.ok && (result.category === "blocked_url" || result.category === "blocked_address"));

/** Whether trying again later may succeed: no answer, or a busy or failing server. */
const retryable = (result: EgressResult): boolean =>
  result.status === undefined || retryableStatus(result.status);

export function createHolderEnds(
  ctx: Ctx,
  findEndUrl: HolderEndUrlFinder = createHolderEndUrlFinder(ctx.upstream.url, ctx.policy, ctx.clock),
): HolderEnds {
  async function post(url: URL, row: RelayRow, holderSubscriptionId: string, reason: string) {
    const body = Buffer.from(
      subscriptionEndBody({
        subscriptionId: holderSubscriptionId,
        reason: holderEndReason(reason) ?? "gone",
      }),
      "utf8",
    );
    // A new webhook-id and timestamp per attempt: the holder acts on an id once, and a retry
    // minutes later must still be inside its timestamp window.
    const headers = createStandardSigner({ secrets: holderSecrets(ctx, row) }).headers({
      id: `msg_${randomBytes(16).toString("base64url")}`,
      timestamp: Math.floor(ctx.clock() / 1000),
      body,
    });
    return postWebhook({ url, headers, body, policy: ctx.policy });
  }

  async function endOne(row: RelayRow): Promise<Outcome> {
    const db = ctx.store.db;
    const id = row.agent_subscription_id;
    const holderSubscriptionId = row.holder_subscription_id;
    if (holderSubscriptionId === null) return "taken-elsewhere";
    if (!(await claimHolderEnd(db, row, ctx.clock() + CLAIM_MS))) return "taken-elsewhere";
    const where = await findEndUrl();
    if ("unsupported" in where) {
      ctx.log.info({ event: "forwarder.holder_end_not_taken" }, where.unsupported);
      await rescheduleHolderEnd(db, id, null);
      return "not-taken";
    }
    const result =
      "url" in where
        ? await post(where.url, row, holderSubscriptionId, row.ended_reason ?? "gone")
        : undefined;
    if (result?.ok === true) {
      await forgetHolderSide(db, id);
      return "ended";
    }
    if (result !== undefined && (notTaken(result) || !retryable(result))) {
      ctx.log.warn(
        { event: "forwarder.holder_end_refused", status: result.status },
        "the holder did not take the end request; its next doorbell gets 410",
      );
      await rescheduleHolderEnd(db, id, null);
      return "not-taken";
    }
    const delay = RETRY_DELAYS_MS[row.holder_end_attempts];
    ctx.log.warn(
      {
        event: "forwarder.holder_end_failed",
        ...(result === undefined || result.ok ? {} : { category: result.category, status: result.status }),
        retry: delay !== undefined,
      },
      delay === undefined
        ? "the holder could not be told; its next doorbell gets 410"
        : "the holder could not be told yet; trying again",
    );
    await rescheduleHolderEnd(db, id, delay === undefined ? null : ctx.clock() + delay);
    return "retry";
  }

  return async () => {
    const due = await dueHolderEnds(ctx, BATCH);
    const outcomes = await Promise.all(due.map(endOne));
    const ended = outcomes.filter((outcome) => outcome === "ended").length;
    if (ended > 0) {
      ctx.log.info(
        { event: "forwarder.holder_sides_ended", count: ended },
        "the holder ended its side of relays whose agent side ended",
      );
    }
    return ended;
  };
}
