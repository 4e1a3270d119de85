import { randomBytes } from "node:crypto";
import type { EventOccurrence } from "../protocol/index.js";

export interface EmitBufferOptions {
  /** Events older than this are dropped (default 10 minutes). */
  maxAgeMs?: number;
  /** At most this many events are kept per event type (default 10 000). */
  maxEvents?: number;
}

/** One kept event: its place, when it was kept, and (for a targeted emit) its one subscription. */
export interface BufferEntry {
  seq: number;
  at: number;
  event: EventOccurrence;
  /** Set by a targeted emit: only this subscription sees it. */
  target?: string;
}

export type BufferRead =
  | { ok: true; entries: BufferEntry[]; cursor: string; hasMore: boolean }
  | { ok: false; reason: string };

/**
 * The bounded window of emitted events that serves poll (and replays) for emit-only types.
 * Cursors are `<epoch>.<seq>`: the epoch is random per process, so after a restart every old
 * cursor is recognisably expired rather than silently wrong.
 */
export class EmitBuffer {
  private readonly epoch = randomBytes(6).toString("base64url");
  private seq = 0;
  private readonly byName = new Map<string, { entries: BufferEntry[]; evictedUpTo: number }>();
  private readonly maxAgeMs: number;
  private readonly maxEvents: number;

  constructor(
    options: EmitBufferOptions,
    private readonly clock: () => number,
  ) {
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60 * 1000;
    this.maxEvents = options.maxEvents ?? 10_000;
  }

  /** The position after everything emitted so far: what a `null` cursor starts from. */
  now(): string {
    return this.cursorOf(this.seq);
  }

  cursorOf(seq: number): string {
    return `${this.epoch}.${seq}`;
  }

  append(event: EventOccurrence, target?: string): number {
    const slot = this.slot(event.name);
    this.seq += 1;
    slot.entries.push(
      target === undefined
        ? { seq: this.seq, at: this.clock(), event }
        : { seq: this.seq, at: this.clock(), event, target },
    );
    this.evict(slot);
    return this.seq;
  }

  /**
   * Entries of `name` after `cursor` that `accept` keeps, at most `limit`. The returned cursor is
   * the last entry returned, or everything scanned when the batch is not full.
   */
  read(name: string, cursor: string, limit: number, accept: (entry: BufferEntry) => boolean): BufferRead {
    const position = this.parse(cursor);
    if (position === undefined) return { ok: false, reason: "The cursor is not from this server process" };
    const slot = this.slot(name);
    this.evict(slot);
    if (position < slot.evictedUpTo) return { ok: false, reason: "Events after the cursor left the buffer" };
    const entries: BufferEntry[] = [];
    let last = Math.max(position, this.seq);
    let hasMore = false;
    for (const entry of slot.entries) {
      if (entry.seq <= position || !accept(entry)) continue;
      if (entries.length === limit) {
        hasMore = true;
        last = (entries[entries.length - 1] as BufferEntry).seq;
        break;
      }
      entries.push(entry);
    }
    return { ok: true, entries, cursor: this.cursorOf(last), hasMore };
  }

  /**
   * Every kept entry of `name` that `accept` keeps, from the oldest (for a subscription without a
   * cursor that asked for `maxAgeMs` of history). Never a gap: it asks for what is kept.
   */
  readRecent(name: string, limit: number, accept: (entry: BufferEntry) => boolean): BufferRead {
    const slot = this.slot(name);
    this.evict(slot);
    return this.read(name, this.cursorOf(slot.evictedUpTo), limit, accept);
  }

  /** The sequence number of a cursor of this process, or undefined. */
  parse(cursor: string): number | undefined {
    const dot = cursor.lastIndexOf(".");
    if (dot < 0 || cursor.slice(0, dot) !== this.epoch) return undefined;
    const seq = Number(cursor.slice(dot + 1));
    return Number.isSafeInteger(seq) && seq >= 0 && seq <= this.seq ? seq : undefined;
  }

  private slot(name: string) {
    let slot = this.byName.get(name);
    if (!slot) {
      slot = { entries: [], evictedUpTo: 0 };
      this.byName.set(name, slot);
    }
    return slot;
  }

  private evict(slot: { entries: BufferEntry[]; evictedUpTo: number }): void {
    const oldest = this.clock() - this.maxAgeMs;
    let drop = Math.max(0, slot.entries.length - this.maxEvents);
    while (drop < slot.entries.length && (slot.entries[drop] as BufferEntry).at < oldest) drop += 1;
    if (drop === 0) return;
    slot.evictedUpTo = (slot.entries[drop - 1] as BufferEntry).seq;
    slot.entries.splice(0, drop);
  }
}
