/**
 * What a test agent is on any transport: its own SQLite inbox store in memory with its inbox
 * created, and the AgentInbox options that say who it is, how it signs and how it answers.
 */
import { type Database, migrate, openDatabase } from "@doorbell/store";
import type { AgentInboxOptions, Responder } from "../src/inbox/agent-inbox.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { createSqlInboxStore, type InboxStore } from "../src/inbox/store.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import { agreementsInboxMigrations } from "../src/schema.js";
import type { Party } from "./inbox-parties.js";

export interface AgentBase {
  readonly party: Party;
  readonly policy: LimitsPolicy;
  readonly respond: Responder;
  readonly resolveKey: KeyResolver;
  readonly clock: () => number;
}

/** A fresh in-memory store holding the party's inbox under `policy`. */
export async function openAgentStore(setup: AgentBase) {
  const handle = await openDatabase({ url: ":memory:" });
  await migrate(handle, [agreementsInboxMigrations]);
  const store = createSqlInboxStore(handle);
  await store.createInbox({
    address: setup.party.address,
    policy: setup.policy,
    expiresAt: null,
    createdAt: setup.clock(),
  });
  return { handle, store };
}

/** The AgentInbox options every test agent has; a transport adds its own. */
export function agentIdentity(setup: AgentBase, store: InboxStore) {
  return {
    address: setup.party.address,
    name: `${setup.party.org} agent`,
    party: setup.party.party,
    actingFor: { org_name: setup.party.org, contact: `owner@${setup.party.domain}` },
    agent: { name: `${setup.party.domain} agent`, kind: "api" },
    store,
    signingKey: setup.party.key,
    jku: setup.party.jku,
    resolveKey: setup.resolveKey,
    respond: setup.respond,
    clock: setup.clock,
  } satisfies Partial<AgentInboxOptions>;
}

/** The same on a database the caller opened: migrated, the inbox created unless it is there already. */
export async function reopenAgentStore(setup: AgentBase, handle: Database) {
  await migrate(handle, [agreementsInboxMigrations]);
  const store = createSqlInboxStore(handle);
  if ((await store.getInbox(setup.party.address)) === undefined) {
    await store.createInbox({
      address: setup.party.address,
      policy: setup.policy,
      expiresAt: null,
      createdAt: setup.clock(),
    });
  }
  return { handle, store };
}
