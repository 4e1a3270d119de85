/**
 * A durable upstream for client tests: an append-only log whose index is the cursor, with
 * compaction (old cursors expire) and an authorization switch. One event type, "log.appended",
 * is served by a check function, so poll, push and webhook all read the same log.
 */
import { EventsError } from "../src/protocol/index.js";
import type { EventsServer } from "../src/server/index.js";

export const EVENT = "log.appended";

export class Upstream {
  readonly entries: { id: string; text: string }[] = [];
  compactedBefore = 0;
  allowed = true;

  /** `idPrefix` keeps eventIds unique across server processes (a real upstream's ids are). */
  constructor(private readonly idPrefix = "") {}

  append(text: string): string {
    const id = `${this.idPrefix}e${this.entries.length + 1}`;
    this.entries.push({ id, text });
    return id;
  }

  /** Drops history: cursors older than now expire. */
  compact(): void {
    this.compactedBefore = this.entries.length;
  }

  register(events: EventsServer, nextPollMs = 1_000): void {
    events.event({
      name: EVENT,
      description: "A line was appended to the test log",
      nextPollMs,
      authorize: () => {
        if (!this.allowed) throw new EventsError("Unauthorized", { reason: "Access revoked" });
        return true;
      },
      check: (_ctx, _params, cursor, { maxEvents }) => {
        if (cursor === null) return { events: [], cursor: String(this.entries.length) };
        const from = Number.parseInt(cursor, 10);
        if (!(from >= this.compactedBefore && from <= this.entries.length)) {
          throw new EventsError("CursorExpired", { reason: "Upstream history compacted" });
        }
        const slice = this.entries.slice(from, from + maxEvents);
        return {
          events: slice.map((entry, index) => ({
            eventId: entry.id,
            data: { text: entry.text },
            cursor: String(from + index + 1),
          })),
          cursor: String(from + slice.length),
          hasMore: from + slice.length < this.entries.length,
        };
      },
    });
  }
}
