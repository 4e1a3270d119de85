/** One e-mail to the person's verified channel. Text and HTML come from the same template. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** SMTP in production; the local mailbox (a dev page of the running server) when none is configured. */
export interface Mailer {
  readonly kind: "smtp" | "local-mailbox";
  send(message: MailMessage): Promise<void>;
}
