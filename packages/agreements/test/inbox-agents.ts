/**
 * Two agent inboxes on loopback: each with its own SQLite store, its own SMTP server, DKIM keys in
 * an injected DNS zone, and a sender that delivers over real SMTP to the other side's server.
 */
import { AgentInbox, type AgentInboxOptions } from "../src/inbox/agent-inbox.js";
import { emailOutlet } from "../src/inbox/email-outlet.js";
import { createSmtpSender, type InboxSmtpServer, startInboxSmtpServer } from "../src/inbox/smtp.js";
import type { InboxStore } from "../src/inbox/store.js";
import type { Message } from "../src/message/types.js";
import { type AgentBase, agentIdentity, openAgentStore } from "./agent-base.js";
import type { dnsZone } from "./inbox-parties.js";

export interface RunningAgent {
  readonly inbox: AgentInbox;
  readonly store: InboxStore;
  readonly smtp: InboxSmtpServer;
  readonly plain: string[];
  readonly refused: string[];
  readonly states: string[];
  close(): Promise<void>;
}

export interface AgentSetup extends AgentBase {
  readonly zone: ReturnType<typeof dnsZone>;
  /** Where mail for another domain goes: its SMTP port. */
  readonly route: (domain: string) => number;
  readonly extra?: Partial<AgentInboxOptions>;
}

export async function startAgent(setup: AgentSetup): Promise<RunningAgent> {
  const { handle, store } = await openAgentStore(setup);
  const plain: string[] = [];
  const refused: string[] = [];
  const states: string[] = [];
  const senders = new Map<number, ReturnType<typeof createSmtpSender>>();
  const inbox = new AgentInbox({
    ...agentIdentity(setup, store),
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
