import type { Database, Sealer } from "@doorbell/store";
import type { HolderTables } from "../model/tables.js";
import type { Mailer, MailMessage } from "./mailer.js";

/** One stored mail, opened for the dev mailbox page. */
export interface MailboxEntry {
  id: number;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface ListMailboxOptions {
  /** Only mails to this address (compared case-insensitively after trimming). */
  to?: string;
  /** Newest first; at most this many (default 100, at most 1000). */
  limit?: number;
}

/**
 * The mailer `doorbell serve` uses when no SMTP server is configured: every mail is kept in
 * `holder_mail` and read on the running server's dev mailbox page. The recipient and both bodies
 * are sealed (the bodies carry the confirm and manage links, which are capabilities); only the
 * subject, which never carries a secret, is stored in clear.
 */
export interface LocalMailbox extends Mailer {
  readonly kind: "local-mailbox";
  /** The stored mails, newest first, opened. For the dev page only: it shows recipients. */
  listMailbox(options?: ListMailboxOptions): Promise<MailboxEntry[]>;
}

const AAD = {
  to: "holder.mail.to",
  text: "holder.mail.text",
  html: "holder.mail.html",
} as const;

export function createLocalMailbox(options: {
  store: Database<HolderTables>;
  sealer: Sealer;
  clock: () => number;
}): LocalMailbox {
  const { store, sealer, clock } = options;
  return {
    kind: "local-mailbox",
    async send(message: MailMessage): Promise<void> {
      await store.db
        .insertInto("holder_mail")
        .values({
          to_sealed: sealer.seal(message.to, AAD.to),
          subject: message.subject,
          text_body: sealer.seal(message.text, AAD.text),
          html_body: sealer.seal(message.html, AAD.html),
          created_at: clock(),
        })
        .execute();
    },
    async listMailbox(list: ListMailboxOptions = {}): Promise<MailboxEntry[]> {
      const limit = Math.min(Math.max(Math.trunc(list.limit ?? 100), 1), 1000);
      const wanted = list.to?.trim().toLowerCase();
      const rows = await store.db
        .selectFrom("holder_mail")
        .selectAll()
        .orderBy("id", "desc")
        .limit(wanted === undefined ? limit : 1000)
        .execute();
      const entries: MailboxEntry[] = [];
      for (const row of rows) {
        const to = sealer.openText(row.to_sealed, AAD.to);
        if (wanted !== undefined && to.trim().toLowerCase() !== wanted) continue;
        entries.push({
          id: Number(row.id),
          to,
          subject: row.subject,
          text: sealer.openText(row.text_body, AAD.text),
          html: sealer.openText(row.html_body, AAD.html),
          createdAt: row.created_at,
        });
        if (entries.length >= limit) break;
      }
      return entries;
    },
  };
}

/** Whether a mailer is the local mailbox (the dev page exists only then). */
export function isLocalMailbox(mailer: Mailer): mailer is LocalMailbox {
  return (
    mailer.kind === "local-mailbox" && typeof (mailer as Partial<LocalMailbox>).listMailbox === "function"
  );
}
