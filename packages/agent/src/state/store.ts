import { type AgentState, emptyState } from "./schema.js";

/** Where the agent's state lives between runs. `save` resolves once the state is durable. */
export interface StateStore {
  load(): Promise<AgentState>;
  save(state: AgentState): Promise<void>;
  close?(): Promise<void>;
  /** For messages, e.g. the file's path. */
  readonly description: string;
}

/** Keeps the state for the life of the process only (tests, or an agent that persists elsewhere). */
export function createMemoryStateStore(initial: AgentState = emptyState()): StateStore {
  let saved = structuredClone(initial);
  return {
    description: "memory",
    async load() {
      return structuredClone(saved);
    },
    async save(state) {
      saved = structuredClone(state);
    },
  };
}
