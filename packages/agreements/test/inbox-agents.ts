/**
 * Two agent inboxes on loopback: each with its own SQLite store, its own SMTP server, DKIM keys in
 * an injected DNS zone, and a sender that delivers over real SMTP to the other side's server.
 */
import { migrate, openDatabase } from "@doorbell/store";
import { AgentInbox, type AgentInboxOptions, type Responder } from "../src/inbox/agent-inbox.js";
import { emailOutlet } from "../src/inbox/email-outlet.js";
import type { LimitsPolicy } from "../src/inbox/limits.js";
import { createSmtpSender, type InboxSmtpServer, startInboxSmtpServer } from "../src/inbox/smtp.js";
import { agreementsInboxMigrations, createSqlInboxStore, type InboxStore } from "../src/inbox/store.js";
import type { KeyResolver } from "../src/jws/resolver.js";
import type { Message } from "../src/message/types.js";
import type { dnsZone, Party } from "./inbox-parties.js";

export interface RunningAgent {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  readonly smtp: InboxSmtpServer;
  readonly plain: string[];
  readonly refused: string[];
  readonly states: string[];
  close(): Promise<void>;
}

export interface AgentSetup {
  readonly party: Party;
  readonly policy: LimitsPolicy;
  readonly respond: Responder;
  readonly resolveKey: KeyResolver;
  readonly clock: () => number;
  readonly zone: ReturnType<typeof dnsZone>;
  /** Where mail for another domain goes: its SMTP port. */
  readonly route: (domain: string) => number;
  readonly extra?: Partial<AgentInboxOptions>;
}

export async function startAgent(setup: AgentSetup): Promise<RunningAgent> {
  const handle = await openDatabase({ url: ":memory:" });
  await migrate(handle, [agreementsInboxMigrations]);
  const store = createSqlInboxStore(handle);
  await store.createInbox({
    address: setup.party.address,
    policy: setup.policy,
    expiresAt: null,
    createdAt: setup.clock(),
  });
  const plain: string[] = [];
  const refused: string[] = [];
  const states: string[] = [];
  const senders = new Map<number, ReturnType<typeof createSmtpSender>>();
  const inbox = new AgentInbox({
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
    mailAuth: { resolver: setup.zone, mta: `mx.${setup.party.domain}` },
    outlets: {
      email: emailOutlet({
        dkim: setup.party.dkim,
        send: async (raw, envelope) => {
          const port = setup.route(envelope.to.slice(envelope.to.lastIndexOf("@") + 1));
          let sender = senders.get(port);
          if (sender === undefined) {
            sender = createSmtpSender({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
            senders.set(port, sender);
          }
          await sender.send(raw, envelope);
        },
      }),
    },
    onPlainMail: (mail) => {
      plain.push(mail.verdict.reason ?? "");
    },
    onRefused: (_message: Message, reason: string) => {
      refused.push(reason);
    },
    onState: (_thread, state) => {
      states.push(state);
    },
    ...setup.extra,
  });
  const smtp = await startInboxSmtpServer({
    accepts: async (address) => address === inbox.address && (await store.getInbox(address)) !== undefined,
    onMail: async (envelope) => {
      await inbox.receive(envelope).catch((error) => {
        console.error("RECEIVE FAILED", setup.party.domain, error);
        throw error;
      });
    },
  });
  return {
    inbox,
    store,
    smtp,
    plain,
    refused,
    states,
    async close() {
      for (const sender of senders.values()) sender.close();
      await smtp.close();
      await handle.close();
    },
  };
}
