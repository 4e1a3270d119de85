/** One e-mail to the person's verified channel. Text and HTML come from the same template. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra header fields, e.g. RFC 8058 List-Unsubscribe (push/one-click-unsubscribe.ts). */
  headers?: Readonly<Record<string, string>>;
}

/** SMTP in production; the local mailbox (a dev page of the running server) when none is configured. */
export interface Mailer {
  readonly kind: "smtp" | "local-mailbox";
  send(message: MailMessage): Promise<void>;
}
