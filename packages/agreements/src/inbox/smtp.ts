import type { AddressInfo } from "node:net";
import nodemailer from "nodemailer";
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from "smtp-server";

/**
 * Real SMTP at both ends of an agent inbox: `smtp-server` receives mail for the inbox addresses
 * (refusing any other recipient at RCPT TO), nodemailer sends the already DKIM-signed bytes.
 */

export interface ReceivedEnvelope {
  readonly raw: Buffer;
  readonly mailFrom: string | undefined;
  readonly rcptTo: readonly string[];
  readonly remoteAddress: string;
  readonly helo: string;
}

export interface InboxSmtpServerOptions {
  /** Whether this server takes mail for an address (checked at RCPT TO). */
  readonly accepts: (address: string) => boolean | Promise<boolean>;
  /** Called once per accepted mail; a throw answers 451 so the sender retries. */
  readonly onMail: (envelope: ReceivedEnvelope) => Promise<void>;
  /** Largest mail accepted, bytes (default 1 MiB). */
  readonly maxBytes?: number;
  /** Extra smtp-server options (TLS keys in production). */
  readonly server?: Partial<SMTPServerOptions>;
}

export interface InboxSmtpServer {
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

export async function startInboxSmtpServer(
  options: InboxSmtpServerOptions,
  listen: { host?: string; port?: number } = {},
): Promise<InboxSmtpServer> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH"],
    disableReverseLookup: true,
    size: maxBytes,
    logger: false,
    ...options.server,
    onRcptTo(address, _session, callback) {
      Promise.resolve(options.accepts(address.address.toLowerCase())).then(
        (ok) => callback(ok ? undefined : Object.assign(new Error("no such mailbox"), { responseCode: 550 })),
        () => callback(Object.assign(new Error("try again later"), { responseCode: 451 })),
      );
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          callback(Object.assign(new Error("message too large"), { responseCode: 552 }));
          return;
        }
        const envelope: ReceivedEnvelope = {
          raw: Buffer.concat(chunks),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          rcptTo: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          remoteAddress: session.remoteAddress,
          helo: session.hostNameAppearsAs,
        };
        options.onMail(envelope).then(
          () => callback(),
          () => callback(Object.assign(new Error("try again later"), { responseCode: 451 })),
        );
      });
    },
  });
  const host = listen.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port ?? 0, host, () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return { port, host, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface MailSender {
  send(raw: Buffer, envelope: { from: string; to: string }): Promise<void>;
  close(): void;
}

/** Sends finished (signed) mail over SMTP. `smtp` is nodemailer's transport options or an smtp:// URL. */
export function createSmtpSender(smtp: string | Record<string, unknown>): MailSender {
  const transport = nodemailer.createTransport(smtp as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(raw, envelope) {
      await transport.sendMail({ envelope, raw });
    },
    close: () => transport.close(),
  };
}
