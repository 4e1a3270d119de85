/** A DoorbellAgent on a real holder, its listener on loopback, and the doorbells a holder would ring. */
import { generateSecret } from "@doorbell/webhooks";
import {
  type AgentError,
  type AgentState,
  createMemoryStateStore,
  DoorbellAgent,
  emptyState,
  type IntentHandle,
  type Match,
  type StateStore,
  type SubscriptionReport,
} from "../src/index.js";
import { doorbell, ring, serveListener } from "./doorbell-sender.js";
import type { RunningHolder } from "./holder-fixture.js";

export const SUB_ID = "sub_agentFixture0000000000";
export const LOCAL_ID = "d_agentFixtureLocalId00000";

/** The state a restart finds: the intent watched and its subscription active (made in an earlier run). */
export function subscribedState(code: string, secret = generateSecret()): AgentState {
  const state = emptyState();
  state.watches.w_fixture = {
    handle: "w_fixture",
    code,
    subscription: {
      localId: LOCAL_ID,
      url: `https://agent.example.com/doorbell/${LOCAL_ID}`,
      subscriptionId: SUB_ID,
      status: "active",
      secrets: [{ secret }],
    },
  };
  return state;
}

export interface AgentRun {
  agent: DoorbellAgent;
  matches: Match[];
  statuses: string[];
  reports: SubscriptionReport[];
  errors: AgentError[];
  /** Rings this agent's endpoint as the holder would, signed with the subscription's secret at the holder's clock. */
  ring(
    type: string,
    data: Record<string, unknown>,
  ): Promise<{ status: number; json: Record<string, unknown> }>;
  /** Lets the hooks that run after a doorbell's answer finish. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function runAgent(
  h: RunningHolder,
  options: {
    store?: StateStore;
    endpointUrl?: string;
    /** The secret of the subscription in the state, to ring with. */
    secret?: string;
    onMatches?: (intent: IntentHandle, matches: Match[]) => void;
  } = {},
): Promise<AgentRun> {
  const matches: Match[] = [];
  const statuses: string[] = [];
  const reports: SubscriptionReport[] = [];
  const errors: AgentError[] = [];
  const agent = await DoorbellAgent.open({
    holder: { url: h.mcpUrl },
    clock: h.clock.now,
    store: options.store ?? createMemoryStateStore(),
    ...(options.endpointUrl === undefined ? {} : { endpointUrl: options.endpointUrl }),
    onMatches: (intent, found) => {
      options.onMatches?.(intent, found);
      matches.push(...found);
    },
    onStatus: (_intent, status) => {
      statuses.push(status);
    },
    onSubscription: (_intent, report) => {
      reports.push(report);
    },
    onError: (_intent, error) => {
      errors.push(error);
    },
  });
  const served = await serveListener(agent.listener);
  const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 20));
  return {
    agent,
    matches,
    statuses,
    reports,
    errors,
    async ring(type, data) {
      if (options.secret === undefined) throw new Error("give runAgent the subscription's secret to ring");
      const secret = options.secret;
      const answer = await ring(`${served.origin}/doorbell/${LOCAL_ID}`, {
        secrets: [secret],
        body: doorbell(type, { subscriptionId: SUB_ID, ...data }, new Date(h.clock.now())),
        timestamp: Math.floor(h.clock.now() / 1000),
      });
      await settle();
      return answer;
    },
    settle,
    async close() {
      await served.close();
      await agent.close();
    },
  };
}
