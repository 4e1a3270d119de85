/**
 * The state in memory plus ordered saves: `commit()` resolves when everything changed before the
 * call is durable. Saves never overlap; changes made while one runs are written by the next.
 */
import type { AgentState } from "./schema.js";
import type { StateStore } from "./store.js";

export class StateBox {
  readonly state: AgentState;
  readonly #store: StateStore;
  #tail: Promise<void> = Promise.resolve();
  #pending: Promise<void> | undefined;

  constructor(store: StateStore, state: AgentState) {
    this.#store = store;
    this.state = state;
  }

  static async open(store: StateStore): Promise<StateBox> {
    return new StateBox(store, await store.load());
  }

  get description(): string {
    return this.#store.description;
  }

  commit(): Promise<void> {
    // One queued save covers every commit made while the previous save runs.
    this.#pending ??= this.#tail.then(
      () => {
        this.#pending = undefined;
        return this.#store.save(structuredClone(this.state));
      },
      () => {
        this.#pending = undefined;
        return this.#store.save(structuredClone(this.state));
      },
    );
    this.#tail = this.#pending;
    return this.#pending;
  }

  async close(): Promise<void> {
    await this.#tail.catch(() => {});
    await this.#store.close?.();
  }
}
