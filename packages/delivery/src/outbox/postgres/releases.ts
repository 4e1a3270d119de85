import type { EngineContext } from "../../context.js";
import { nextWake } from "../../wake.js";
import type { ReleaseRequest, ReleaseResult } from "../backend.js";
import { type ReleaseWrite, readForRelease, writeRelease, writeReleases } from "./leases.js";

/**
 * PostgreSQL: the releases asked for in one event-loop turn share two statements (one read, one
 * write) instead of two each. While events are being enqueued, every enqueue commit wakes the
 * leased subscriptions together, and they tend to finish their passes together too.
 */

interface Pending extends ReleaseRequest {
  resolve(result: ReleaseResult): void;
  reject(error: unknown): void;
}

const pending = new WeakMap<EngineContext, Pending[]>();
// Taken at load time, so a test that installs fake timers later cannot stall the releases.
const defer = setImmediate;

/** Gives the lease back with its next wake-up (leases.ts, `writeRelease`, says how). */
export function releasePostgres(ctx: EngineContext, request: ReleaseRequest): Promise<ReleaseResult> {
  let batch = pending.get(ctx);
  if (!batch) {
    const requests: Pending[] = [];
    batch = requests;
    pending.set(ctx, requests);
    defer(() => {
      pending.delete(ctx);
      releaseAll(ctx, requests).catch((error: unknown) => {
        for (const request of requests) request.reject(error);
      });
    });
  }
  return new Promise<ReleaseResult>((resolve, reject) => {
    (batch as Pending[]).push({ ...request, resolve, reject });
  });
}

async function releaseAll(ctx: EngineContext, requests: readonly Pending[]): Promise<void> {
  const views = await readForRelease(
    ctx,
    requests.map((request) => request.id),
  );
  const now = ctx.clock();
  const together: Array<{ request: Pending; write: ReleaseWrite }> = [];
  const alone: Array<Promise<void>> = [];
  for (const request of requests) {
    const seen = views.get(request.id);
    if (!seen || seen.sub.lease_owner !== request.workerId) {
      request.resolve("lost");
      continue;
    }
    const { sub } = seen;
    if (sub.status === "ended" && sub.purge_at !== null && now >= sub.purge_at) {
      // Push profile §6 rule 7: the subscription, its secret and its endpoint are deleted. Rare.
      alone.push(settle(request, purge(ctx, request)));
      continue;
    }
    const write: ReleaseWrite = {
      id: request.id,
      workerId: request.workerId,
      version: seen.version,
      wake: nextWake(ctx, sub, seen.head, seen.matchesQueued),
      now,
      delivered: request.delivered,
      wait: request.wait,
    };
    // A release that waits for the row lock must not hold up the others.
    if (request.wait) alone.push(settle(request, writeRelease(ctx, write)));
    else together.push({ request, write });
  }
  if (together.length > 0) {
    await settle(
      undefined,
      writeReleases(
        ctx,
        together.map((entry) => entry.write),
      ).then((results) => {
        for (const { request } of together) request.resolve(results.get(request.id) ?? "lost");
      }),
      together.map((entry) => entry.request),
    );
  }
  await Promise.all(alone);
}

/** Settles `request` (or `many`) with the outcome of `work`, never throwing. */
async function settle(
  request: Pending | undefined,
  work: Promise<unknown>,
  many: readonly Pending[] = request ? [request] : [],
): Promise<void> {
  try {
    const result = await work;
    if (request) request.resolve(result as ReleaseResult);
  } catch (error) {
    for (const each of many) each.reject(error);
  }
}

/**
 * Deletes the subscription, then its queue: the outbox has no foreign key on PostgreSQL (schema.ts,
 * version 5). The row first: its delete waits out any transaction still appending to the queue, so
 * the second statement sees every row, and no append writes to a subscription that is gone.
 */
async function purge(ctx: EngineContext, request: ReleaseRequest): Promise<ReleaseResult> {
  await ctx.store.transaction(async (trx) => {
    const deleted = await trx
      .deleteFrom("delivery_subscriptions")
      .where("id", "=", request.id)
      .where("lease_owner", "=", request.workerId)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) > 0) {
      await trx.deleteFrom("delivery_outbox").where("subscription_id", "=", request.id).execute();
    }
  });
  return "released";
}
