import { randomBytes } from "node:crypto";
import { sql } from "@doorbell/store";
import { postWebhook } from "@doorbell/webhooks";
import { logFailedAttempt } from "./attempt-log.js";
import { signAttempt, verificationBody } from "./channels.js";
import { type EngineContext, endpointOf, secretAd } from "./context.js";
import { randomId } from "./ids.js";
import type { SubscriptionRow, SubscriptionStatus } from "./schema.js";
import { end } from "./subscriptions.js";

/** Push profile §6 rule 2 and the MCP sketch: three failed challenges end the subscription. */
export const MAX_CHALLENGES = 3;

/** A challenge is due for a new endpoint and for every new secret. */
export function needsChallenge(sub: SubscriptionRow): boolean {
  return sub.status !== "ended" && (sub.verified === 0 || sub.pending_secret_sealed !== null);
}

/**
 * The columns of a proven pending secret. The secret it replaces keeps signing for the overlap; a
 * renewal with the secret already in force is no rotation, so the previous secret stays as it was
 * and no doorbell carries the same signature twice.
 */
function rotationTo(
  ctx: EngineContext,
  sub: SubscriptionRow,
  secret: string,
  now: number,
): Partial<SubscriptionRow> {
  const current = ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"));
  if (current === secret) return { pending_secret_sealed: null };
  return {
    secret_sealed: ctx.sealer.seal(secret, secretAd(sub.id, "current")),
    previous_secret_sealed: ctx.sealer.seal(current, secretAd(sub.id, "previous")),
    previous_secret_until: now + ctx.secretOverlapMs,
    pending_secret_sealed: null,
  };
}

/**
 * Sends one challenge of 192 random bits, signed with the secret being proven, and records the
 * answer: exactly 200 with `{"challenge": <same value>}` within the policy's 10 s.
 */
export async function sendChallenge(ctx: EngineContext, sub: SubscriptionRow): Promise<boolean> {
  const challenge = randomBytes(24).toString("base64url");
  const now = ctx.clock();
  const pending = sub.pending_secret_sealed !== null;
  const secret = pending
    ? ctx.sealer.openText(sub.pending_secret_sealed as string, secretAd(sub.id, "pending"))
    : ctx.sealer.openText(sub.secret_sealed as string, secretAd(sub.id, "current"));
  const body = verificationBody(sub.channel, sub.subscriber_id, challenge, new Date(now).toISOString());
  const bytes = Buffer.from(body, "utf8");
  const headers = signAttempt({
    channel: sub.channel,
    subscriberId: sub.subscriber_id,
    webhookId: randomId("msg_"),
    secrets: [secret],
    timestampSeconds: Math.floor(now / 1000),
    body: bytes,
  });
  const result = await postWebhook({ url: endpointOf(ctx, sub), headers, body: bytes, policy: ctx.policy });
  const passed =
    result.ok && result.status === 200 && !result.bodyTruncated && echoes(result.body, challenge);
  ctx.metrics.attempts.inc({
    channel: sub.channel,
    kind: "challenge",
    outcome: passed ? "passed" : result.ok ? "wrong_answer" : result.category,
  });
  ctx.metrics.attemptSeconds.observe({ channel: sub.channel, kind: "challenge" }, result.durationMs / 1000);

  const after = ctx.clock();
  await ctx.store.transaction(async (trx) => {
    if (passed) {
      const rotation = pending ? rotationTo(ctx, sub, secret, after) : {};
      await trx
        .updateTable("delivery_subscriptions")
        .set({
          ...rotation,
          verified: 1,
          // From the row as it is now: the person may have approved while the challenge was out.
          status: sql<SubscriptionStatus>`case when approved = 1 then 'active' else 'awaiting_approval' end`,
          verify_attempts: 0,
          verify_due_at: null,
          last_error: null,
          updated_at: after,
        })
        .where("id", "=", sub.id)
        .where("status", "!=", "ended")
        .execute();
      return;
    }
    const attempts = sub.verify_attempts + 1;
    await logFailedAttempt(trx, {
      subscriptionId: sub.id,
      kind: "challenge",
      type: "subscription.verification",
      webhookId: null,
      attempt: attempts,
      category: result.ok ? "wrong_answer" : result.category,
      httpStatus: result.status,
      at: after,
    });
    if (attempts >= MAX_CHALLENGES) {
      await trx
        .updateTable("delivery_subscriptions")
        .set({ last_error: "challenge_failed" })
        .where("id", "=", sub.id)
        .execute();
      await end(ctx, trx, sub.id, "verification-failed", { notify: false });
      return;
    }
    await trx
      .updateTable("delivery_subscriptions")
      .set({
        verify_attempts: attempts,
        verify_due_at: after + (ctx.channels[sub.channel].challengeDelaysMs[attempts - 1] ?? 30_000),
        last_error: "challenge_failed",
        updated_at: after,
      })
      .where("id", "=", sub.id)
      .execute();
  });
  return passed;
}

function echoes(body: Uint8Array, challenge: string): boolean {
  try {
    const answer = JSON.parse(Buffer.from(body).toString("utf8")) as { challenge?: unknown };
    return typeof answer === "object" && answer !== null && answer.challenge === challenge;
  } catch {
    return false;
  }
}
