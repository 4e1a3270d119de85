import nodemailer from "nodemailer";
import { parseConnectionUrl } from "nodemailer/lib/shared/index.js";
import type SMTPPool from "nodemailer/lib/smtp-pool/index.js";
import { HolderError } from "../model/types.js";
import type { Mailer, MailMessage } from "./mailer.js";

export interface SmtpMailerOptions {
  /**
   * The server: `smtp://user:pass@host:587` (STARTTLS when offered), `smtps://user:pass@host:465`
   * (TLS from the start). Query parameters are nodemailer options, e.g. `?requireTLS=true`.
   */
  url: string;
  /** The sender, e.g. `"Intent holder" <no-reply@intents.example.sk>`. */
  from: string;
  /** Connection and greeting timeouts in ms (default 10000). */
  timeoutMs?: number;
}

export interface SmtpMailer extends Mailer {
  readonly kind: "smtp";
  /** Where mail goes, for the start-up summary: the password is never part of it. */
  readonly description: string;
  /** Checks that the server answers and accepts the credentials. */
  verify(): Promise<void>;
  close(): void;
}

/** The SMTP connections a holder keeps open at most: mails are sent this many at a time. */
export const SMTP_CONNECTIONS = 4;

/** Checks the URL without ever echoing it (it may carry a password). */
function parseSmtpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HolderError(
      "ERR_HOLDER_INVALID",
      "the SMTP URL cannot be parsed; use smtp://user:pass@host:port",
    );
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") {
    throw new HolderError("ERR_HOLDER_INVALID", "the SMTP URL must start with smtp:// or smtps://");
  }
  if (parsed.hostname === "") throw new HolderError("ERR_HOLDER_INVALID", "the SMTP URL has no host");
  return parsed;
}

/** Why a send failed, in words that carry no address: nodemailer's messages may quote the recipient. */
function failure(error: unknown, what: string): HolderError {
  const details: string[] = [];
  if (typeof error === "object" && error !== null) {
    const { code, responseCode } = error as { code?: unknown; responseCode?: unknown };
    if (typeof code === "string" && /^[A-Z_]{1,32}$/.test(code)) details.push(code);
    if (typeof responseCode === "number") details.push(String(responseCode));
  }
  return new HolderError(
    "ERR_HOLDER_UNAVAILABLE",
    `${what}${details.length > 0 ? ` (${details.join(" ")})` : ""}; try again later`,
  );
}

/** The production mailer: nodemailer over SMTP, with its logger off (it would log recipients). */
export function createSmtpMailer(options: SmtpMailerOptions): SmtpMailer {
  const parsed = parseSmtpUrl(options.url);
  if (typeof options.from !== "string" || options.from.trim() === "") {
    throw new HolderError("ERR_HOLDER_INVALID", "the sender address (from) is required for SMTP");
  }
  const timeout = options.timeoutMs ?? 10_000;
  // The URL parsed into transport options here: given the URL as such, nodemailer takes its second
  // argument as message defaults, and timeouts set there never reached the connection. A pool
  // keeps a few connections open, so a burst of mails (the digests of one import) does not pay a
  // TCP, greeting, TLS and sign-in round per mail.
  const transport = nodemailer.createTransport({
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout * 3,
    pool: true,
    maxConnections: SMTP_CONNECTIONS,
    maxMessages: 100,
    ...parseConnectionUrl(options.url),
    logger: false,
    debug: false,
  } as SMTPPool.Options);
  const description = `${parsed.protocol}//${parsed.username ? `${decodeURIComponent(parsed.username)}@` : ""}${parsed.host}`;
  return {
    kind: "smtp",
    description,
    async send(message: MailMessage): Promise<void> {
      try {
        await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          ...(message.headers === undefined ? {} : { headers: { ...message.headers } }),
          // Nothing in a message may make the holder read a file or fetch a URL.
          disableFileAccess: true,
          disableUrlAccess: true,
        });
      } catch (error) {
        throw failure(error, "the mail server did not accept the message");
      }
    },
    async verify(): Promise<void> {
      try {
        await transport.verify();
      } catch (error) {
        throw failure(error, "the mail server cannot be reached or refused the sign-in");
      }
    },
    close(): void {
      transport.close();
    },
  };
}
