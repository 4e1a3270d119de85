/**
 * What the client keeps per logical subscription between runs: the last safe cursor and, for
 * webhook delivery, the subscription id (a bearer capability on unauthenticated servers), the
 * callback path and the current secret. The client is the source of truth (sketch, "Client owns
 * subscription state"), so this is what makes a restart resume instead of starting from now.
 */
export interface SubscriptionRecord {
  /** The last cursor the server gave for this subscription; null = start from now. */
  cursor: string | null;
  /** The newest eventIds handed to the app, so a replay after a restart is not handed over twice. */
  recentEventIds?: string[];
  webhook?: {
    /** Sketch: the client-generated id (UUIDv4). SEP-3415: the server-derived id, once known. */
    id?: string;
    /** The last path segment of this subscription's callback URL (128 random bits). */
    route: string;
    /** The `whsec_` secret deliveries are verified with, when known. */
    secret?: string;
  };
}

/** Where subscription records live. `set` resolves once the record is durable. */
export interface CursorStore {
  get(key: string): Promise<SubscriptionRecord | undefined>;
  set(key: string, record: SubscriptionRecord): Promise<void>;
  delete(key: string): Promise<void>;
  close?(): Promise<void>;
}

/** Records for the life of the process only (tests, or an app that persists elsewhere). */
export function createMemoryCursorStore(): CursorStore & { readonly size: number; keys(): string[] } {
  const records = new Map<string, SubscriptionRecord>();
  return {
    get size() {
      return records.size;
    },
    keys: () => [...records.keys()],
    async get(key) {
      const record = records.get(key);
      return record === undefined ? undefined : structuredClone(record);
    },
    async set(key, record) {
      records.set(key, structuredClone(record));
    },
    async delete(key) {
      records.delete(key);
    },
  };
}
