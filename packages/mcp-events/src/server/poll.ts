import {
  type EventOccurrence,
  type EventsDialect,
  EventsError,
  type JsonObject,
  type PollOutcome,
} from "../protocol/index.js";
import { canonicalJson, digest } from "./canonical.js";
import {
  authorize,
  type CallContext,
  type Core,
  type LiveSubscription,
  resolve,
  runCheck,
  shape,
  wireOf,
  youngEnough,
} from "./core.js";
import type { BufferEntry } from "./emit-buffer.js";

interface Lease {
  sub: LiveSubscription;
  expiresAt: number;
}

/**
 * `events/poll`. Each request is self-contained; the only state is the ephemeral lease table that
 * drives `onSubscribe`/`onUnsubscribe`, keyed by (principal, name, canonical params) — never by
 * the request's opaque `id`.
 */
export class PollMode {
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly core: Core) {}

  async handle(raw: unknown, call: CallContext): Promise<JsonObject> {
    const wire: EventsDialect = wireOf(this.core, raw, call);
    const query = wire.poll.params.decode(raw);
    const principal = this.core.principalOf(call);
    const leaseId = this.leaseIdOf(principal ?? "", query.name, canonicalJson(query.params));
    let resolved: Awaited<ReturnType<typeof resolve>>;
    try {
      resolved = await resolve(this.core, query, "poll", call, leaseId);
    } catch (error) {
      // A refused poll ends the lease it renewed (revoked authorization terminates poll too).
      if (error instanceof EventsError && error.kind === "Unauthorized") await this.end(leaseId);
      throw error;
    }
    const { def, params, ctx } = resolved;
    await this.touch(leaseId, () => ({
      id: leaseId,
      mode: "poll",
      def,
      params,
      ctx,
      terminate: () => this.end(leaseId),
    }));

    const settings = this.core.settings;
    const maxEvents = Math.min(query.maxEvents ?? settings.defaultMaxEvents, settings.maxMaxEvents);
    const young = youngEnough(query.maxAgeMs, this.core.clock);
    const outcome: PollOutcome = def.check
      ? await this.fromCheck(wire, { def, params, ctx }, query.cursor, maxEvents, young)
      : this.fromBuffer(wire, { def, params, ctx, id: leaseId }, query.cursor, maxEvents, young);
    if (query.routeId !== undefined) outcome.routeId = query.routeId;
    return wire.poll.result.encode(outcome);
  }

  private async fromCheck(
    wire: EventsDialect,
    sub: Pick<LiveSubscription, "def" | "params" | "ctx">,
    cursor: string | null,
    maxEvents: number,
    young: ((event: EventOccurrence) => boolean) | undefined,
  ): Promise<PollOutcome> {
    try {
      const batch = await runCheck(this.core, sub.def, sub.ctx, sub.params, cursor, maxEvents);
      // Too old for maxAgeMs: passed over (the cursor still moves past them), not delivered.
      const events = young ? batch.events.filter(young) : batch.events;
      // Poll carries the cursor on the result, not on each event.
      return { ...batch, events: events.map(withoutCursor), truncated: false };
    } catch (error) {
      if (!(error instanceof EventsError) || error.kind !== "CursorExpired" || wire.cursorExpiry === "error")
        throw error;
      const fresh = await runCheck(this.core, sub.def, sub.ctx, sub.params, null, maxEvents);
      return { ...fresh, events: [], hasMore: false, truncated: true };
    }
  }

  private fromBuffer(
    wire: EventsDialect,
    sub: Pick<LiveSubscription, "def" | "params" | "ctx" | "id">,
    cursor: string | null,
    maxEvents: number,
    young: ((event: EventOccurrence) => boolean) | undefined,
  ): PollOutcome {
    const nextPollMs = sub.def.nextPollMs ?? this.core.settings.nextPollMs;
    const buffer = this.core.buffer;
    // No cursor: from now, or, with maxAgeMs, from the oldest kept event that young.
    if (cursor === null && !young)
      return { events: [], cursor: buffer.now(), hasMore: false, nextPollMs, truncated: false };
    const shaped = new Map<number, ReturnType<typeof shape>>();
    const accept = (entry: BufferEntry) => {
      if (entry.target !== undefined && entry.target !== sub.id) return false;
      if (young && !young(entry.event)) return false;
      const event = shape(sub, entry.event);
      shaped.set(entry.seq, event);
      return event !== undefined;
    };
    const read =
      cursor === null
        ? buffer.readRecent(sub.def.name, maxEvents, accept)
        : buffer.read(sub.def.name, cursor, maxEvents, accept);
    if (!read.ok) {
      if (wire.cursorExpiry === "error") throw new EventsError("CursorExpired", { reason: read.reason });
      return { events: [], cursor: buffer.now(), hasMore: false, nextPollMs, truncated: true };
    }
    const events = read.entries.map((entry) => withoutCursor(shaped.get(entry.seq) ?? entry.event));
    return { events, cursor: read.cursor, hasMore: read.hasMore, nextPollMs, truncated: false };
  }

  /** Lease ids by (principal, name, params): a poll client asks the same thing over and over. */
  private readonly leaseIds = new Map<string, string>();

  private leaseIdOf(principal: string, name: string, params: string): string {
    const key = JSON.stringify([principal, name, params]);
    let id = this.leaseIds.get(key);
    if (id === undefined) {
      id = `poll_${digest(principal, name, params)}`;
      // Bounded: past this many distinct keys the cache starts over (ids are recomputed, not lost).
      if (this.leaseIds.size >= 10_000) this.leaseIds.clear();
      this.leaseIds.set(key, id);
    }
    return id;
  }

  /** First sight of a key runs the limit check and `onSubscribe`; later polls renew the lease. */
  private async touch(id: string, make: () => LiveSubscription): Promise<void> {
    const expiresAt = this.core.clock() + this.core.settings.pollLeaseMs;
    const lease = this.leases.get(id);
    if (lease) {
      lease.expiresAt = expiresAt;
      return;
    }
    const sub = make();
    await this.core.live.add(sub);
    this.leases.set(id, { sub, expiresAt });
  }

  async end(id: string): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    this.leases.delete(id);
    await this.core.live.remove(lease.sub);
  }

  /** Leases not renewed in time end: the poll client's silent goodbye. */
  async sweep(now: number): Promise<void> {
    for (const [id, lease] of [...this.leases]) if (lease.expiresAt <= now) await this.end(id);
  }

  /** Delivery-time re-check: a lease whose authorization was revoked ends now. */
  async recheck(): Promise<void> {
    for (const [id, lease] of [...this.leases]) {
      try {
        await authorize(lease.sub.def, lease.sub.ctx, lease.sub.params);
      } catch {
        await this.end(id);
      }
    }
  }

  async close(): Promise<void> {
    for (const id of [...this.leases.keys()]) await this.end(id);
  }
}

function withoutCursor<T extends { cursor?: string }>(event: T): Omit<T, "cursor"> & { cursor?: never } {
  const { cursor: _, ...rest } = event;
  return rest as Omit<T, "cursor">;
}
