/** A listener on a state with one watched intent and one subscription, as a restart would find them. */
import { generateSecret } from "@doorbell/webhooks";
import { afterEach } from "vitest";
import {
  type AgentState,
  createDoorbellListener,
  createMemoryStateStore,
  type Doorbell,
  type DoorbellListener,
  emptyState,
  type LocalSubscription,
  StateBox,
  type StateStore,
  type WatchState,
} from "../src/index.js";
import { serveListener } from "./doorbell-sender.js";

export const LOCAL_ID = "d_listenerTestLocalId0000";
export const SUBSCRIPTION_ID = "sub_Vq8nR3kX0bT5wLz2Hc7Ym4Pd";

export function stateWithSubscription(subscription: Partial<LocalSubscription> = {}): AgentState {
  const state = emptyState();
  state.watches.w_test = {
    handle: "w_test",
    code: "ic_listenerTestCode",
    subscription: {
      localId: LOCAL_ID,
      url: `https://agent.example.com/doorbell/${LOCAL_ID}`,
      subscriptionId: SUBSCRIPTION_ID,
      status: "active",
      secrets: [{ secret: generateSecret() }],
      ...subscription,
    },
  };
  return state;
}

export interface ServedListener {
  box: StateBox;
  listener: DoorbellListener;
  url: string;
  origin: string;
  received: { watch: WatchState; doorbell: Doorbell }[];
  secret: string;
  close(): Promise<void>;
}

export async function serveStateListener(store: StateStore, clock?: () => number): Promise<ServedListener> {
  const box = await StateBox.open(store);
  const received: ServedListener["received"] = [];
  const listener = createDoorbellListener({
    box,
    ...(clock === undefined ? {} : { clock }),
    onDoorbell: async (watch, doorbell) => {
      received.push({ watch, doorbell });
    },
  });
  const served = await serveListener(listener);
  const secret = box.state.watches.w_test?.subscription?.secrets[0]?.secret as string;
  return {
    box,
    listener,
    origin: served.origin,
    url: `${served.origin}/doorbell/${LOCAL_ID}`,
    received,
    secret,
    async close() {
      await served.close();
      await box.close();
    },
  };
}

/**
 * For a test file whose cases each serve one listener on an in-memory state: registers the
 * afterEach that closes what a case served, and returns the function a case serves with.
 */
export function listenerPerCase() {
  const served: ServedListener[] = [];
  afterEach(async () => {
    await Promise.all(served.splice(0).map((l) => l.close()));
  });
  return async (
    state: AgentState = stateWithSubscription(),
    clock?: () => number,
  ): Promise<ServedListener> => {
    const l = await serveStateListener(createMemoryStateStore(state), clock);
    served.push(l);
    return l;
  };
}
