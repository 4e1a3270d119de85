/**
 * Where the holder's mail goes: an SMTP server when one is configured, else the local mailbox page
 * under an unguessable path, which only a loopback holder may serve.
 */
import type { Database, Sealer } from "@doorbell/store";
import type { HolderConfig } from "../context.js";
import { randomBase62 } from "../intents/index.js";
import { createLocalMailbox, type LocalMailbox } from "../mail/local-mailbox.js";
import type { Mailer } from "../mail/mailer.js";
import { createSmtpMailer, type SmtpMailer } from "../mail/smtp.js";
import type { HolderTables } from "../model/tables.js";

export interface HolderMail {
  mailer: Mailer;
  smtp?: SmtpMailer;
  mailbox?: LocalMailbox;
  /** The mailbox page's path, when mail goes there. */
  mailboxPath?: string;
  /** One line for the summary. */
  description: string;
}

export function openHolderMail(options: {
  smtp?: string;
  mailFrom?: string;
  config: HolderConfig;
  store: Database<HolderTables>;
  sealer: Sealer;
  clock: () => number;
}): HolderMail {
  if (options.smtp !== undefined) {
    const host = new URL(options.config.publicUrl).hostname;
    const smtp = createSmtpMailer({
      url: options.smtp,
      from: options.mailFrom ?? `"${options.config.name}" <no-reply@${host}>`,
    });
    return { mailer: smtp, smtp, description: `SMTP ${smtp.description}` };
  }
  const mailbox = createLocalMailbox({ store: options.store, sealer: options.sealer, clock: options.clock });
  return {
    mailer: mailbox,
    mailbox,
    mailboxPath: `/dev/mailbox/${randomBase62(32)}`,
    description: "local mailbox (no SMTP configured)",
  };
}
