/**
 * The eventIds a subscription has already handed to the app, newest last, bounded. One set per
 * subscription serves every mode, so a mode change or a replay from the cursor never repeats an event.
 */
export class EventIdWindow {
  readonly #ids = new Set<string>();
  readonly #max: number;

  constructor(max: number, initial: readonly string[] = []) {
    this.#max = Math.max(1, max);
    for (const id of initial.slice(-this.#max)) this.#ids.add(id);
  }

  has(eventId: string): boolean {
    return this.#ids.has(eventId);
  }

  /** Remembers `eventId`; returns false when it was already there. */
  add(eventId: string): boolean {
    if (this.#ids.has(eventId)) return false;
    this.#ids.add(eventId);
    if (this.#ids.size > this.#max) {
      const oldest = this.#ids.values().next().value as string;
      this.#ids.delete(oldest);
    }
    return true;
  }

  /** The newest `count` ids, oldest first (what the cursor store keeps across restarts). */
  recent(count: number): string[] {
    const all = [...this.#ids];
    return all.slice(Math.max(0, all.length - count));
  }
}
