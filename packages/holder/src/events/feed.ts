/**
 * What changed for which intents, told by the services (holder.ts wires it) to whoever listens:
 * the Events server (./index.ts) wakes the subscriptions of exactly those intents. It carries
 * intent ids only; listeners read what changed themselves, with the reader's own code.
 */
export interface IntentChangeListener {
  /** New matches were recorded (after their commit). */
  matchesRecorded(intentIds: readonly string[]): void;
  /** An intent was activated, changed or ended. */
  statusChanged(intentId: string): void;
}

export interface IntentChangeFeed extends IntentChangeListener {
  /** Adds a listener; the returned function removes it. */
  listen(listener: IntentChangeListener): () => void;
}

export function createIntentChangeFeed(): IntentChangeFeed {
  const listeners = new Set<IntentChangeListener>();
  return {
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    matchesRecorded(intentIds) {
      for (const listener of listeners) listener.matchesRecorded(intentIds);
    },
    statusChanged(intentId) {
      for (const listener of listeners) listener.statusChanged(intentId);
    },
  };
}
