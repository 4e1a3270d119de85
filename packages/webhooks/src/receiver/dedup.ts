import { WebhookError } from "../errors.js";

/**
 * Remembers which webhook-ids were processed, so a handler runs at most once per id.
 * A key is first claimed (processing, with a lease so a crashed handler does not block it
 * forever), then completed (processed, kept for the replay window) or released on failure.
 */
export type ClaimResult = "claimed" | "processing" | "processed";

export interface DedupStore {
  claim(key: string, now: number, leaseMs: number): Promise<ClaimResult>;
  complete(key: string, now: number, windowMs: number): Promise<void>;
  release(key: string): Promise<void>;
}

export interface MemoryDedupOptions {
  /** Upper bound on remembered ids; a full store refuses new claims rather than forget early. */
  maxEntries?: number;
}

interface Entry {
  processed: boolean;
  until: number;
}

/** The default store: one process, in memory, bounded. */
export function createMemoryDedupStore(options: MemoryDedupOptions = {}): DedupStore {
  const maxEntries = options.maxEntries ?? 1_000_000;
  const entries = new Map<string, Entry>();
  let nextSweep = 0;

  const sweep = (now: number) => {
    for (const [key, entry] of entries) if (entry.until <= now) entries.delete(key);
    nextSweep = now + 1_000;
  };

  return {
    async claim(key, now, leaseMs) {
      const existing = entries.get(key);
      if (existing && existing.until > now) return existing.processed ? "processed" : "processing";
      if (entries.size >= maxEntries || now >= nextSweep) sweep(now);
      if (entries.size >= maxEntries)
        throw new WebhookError("ERR_WEBHOOK_DEDUP_FULL", "the webhook-id store is full");
      entries.set(key, { processed: false, until: now + leaseMs });
      return "claimed";
    },
    async complete(key, now, windowMs) {
      entries.set(key, { processed: true, until: now + windowMs });
    },
    async release(key) {
      entries.delete(key);
    },
  };
}
