import { Agent } from "undici";
import { guardedConnector } from "./connector.js";
import type { EgressPolicy } from "./policy.js";

// One Agent per policy: its connector carries the policy, and reused keep-alive sockets were
// each checked when they were opened.
const agents = new WeakMap<EgressPolicy, Agent>();

/** The undici dispatcher for a policy. A plain Agent never reads HTTP(S)_PROXY from the environment. */
export const egressAgent = (policy: EgressPolicy): Agent => {
  let agent = agents.get(policy);
  if (!agent || agent.closed || agent.destroyed) {
    agent = new Agent({
      connect: guardedConnector(policy),
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      allowH2: false,
      maxHeaderSize: 16 * 1024,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
    });
    agents.set(policy, agent);
  }
  return agent;
};

/** Closes the policy's pooled connections (at shutdown, and between tests). */
export const closeEgress = async (policy: EgressPolicy): Promise<void> => {
  const agent = agents.get(policy);
  agents.delete(policy);
  if (agent && !agent.closed) await agent.close();
};
