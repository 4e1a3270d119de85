/**
 * The SMTP mailer against a real SMTP server on loopback (smtp-server): one message with a text
 * and an HTML part, credentials from the URL, and failures that never quote the recipient.
 */
import { once } from "node:events";
import net, { type AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSmtpMailer, SMTP_CONNECTIONS } from "../../src/mail/smtp.js";
import { HolderError } from "../../src/model/types.js";

interface Received {
  from: string;
  to: string[];
  raw: string;
  user?: string;
}

describe("SMTP mailer", () => {
  const received: Received[] = [];
  let connections = 0;
  let server: SMTPServer;
  let port = 0;

  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authOptional: true,
      logger: false,
      onConnect(_session, callback) {
        connections++;
        callback();
      },
      onAuth(auth, _session, callback) {
        if (auth.username === "holder" && auth.password === "s3cret")
          return callback(null, { user: "holder" });
        callback(new Error("Invalid username or password"));
      },
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith("reject")) {
          const error = new Error(`<${address.address}>: Recipient address rejected`) as Error & {
            responseCode: number;
          };
          error.responseCode = 550;
          return callback(error);
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString("utf8"),
            ...(typeof session.user === "string" ? { user: session.user } : {}),
          });
          callback();
        });
      },
    });
    server.listen(0, "127.0.0.1");
    await once(server.server, "listening");
    port = (server.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("sends one message with text and HTML, signed in with the URL's credentials", async () => {
    const mailer = createSmtpMailer({
      url: `smtp://holder:s3cret@127.0.0.1:${port}`,
      from: '"Intent holder" <no-reply@intents.example.sk>',
    });
    expect(mailer.kind).toBe("smtp");
    expect(mailer.description).toBe(`smtp://holder@127.0.0.1:${port}`);
    await mailer.verify();
    await mailer.send({
      to: "jana@example.sk",
      subject: "Confirm your intent",
      text: "plain body",
      html: "<p>html body</p>",
    });
    mailer.close();
    const last = received.at(-1) as Received;
    expect(last.user).toBe("holder");
    expect(last.from).toBe("no-reply@intents.example.sk");
    expect(last.to).toEqual(["jana@example.sk"]);
    expect(last.raw).toContain("Subject: Confirm your intent");
    expect(last.raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(last.raw).toContain("plain body");
    expect(last.raw).toContain("<p>html body</p>");
  });

  it("a refused recipient becomes ERR_HOLDER_UNAVAILABLE without the address", async () => {
    const mailer = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: "no-reply@intents.example.sk" });
    const error = await mailer.send({ to: "reject.me@example.sk", subject: "s", text: "t", html: "h" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    mailer.close();
    expect(error).toBeInstanceOf(HolderError);
    expect((error as HolderError).code).toBe("ERR_HOLDER_UNAVAILABLE");
    expect((error as HolderError).message).toContain("550");
    expect((error as HolderError).message).not.toContain("reject.me");
    expect((error as HolderError).cause).toBeUndefined();
  });

  it("wrong credentials and a closed port fail verify with a clear error", async () => {
    const wrong = createSmtpMailer({ url: `smtp://holder:nope@127.0.0.1:${port}`, from: "a@example.sk" });
    await expect(wrong.verify()).rejects.toMatchObject({ code: "ERR_HOLDER_UNAVAILABLE" });
    wrong.close();
    const closed = createSmtpMailer({ url: "smtp://127.0.0.1:1", from: "a@example.sk", timeoutMs: 2000 });
    const error = (await closed.verify().then(
      () => undefined,
      (e: unknown) => e,
    )) as HolderError;
    expect(error.code).toBe("ERR_HOLDER_UNAVAILABLE");
    expect(error.message).toMatch(
      /^the mail server cannot be reached or refused the sign-in \(E[A-Z]+\); try again later$/,
    );
    closed.close();
  });

  it("sends a burst of mails over a few kept connections, not one connection each", async () => {
    const mailer = createSmtpMailer({ url: `smtp://holder:s3cret@127.0.0.1:${port}`, from: "a@example.sk" });
    const before = received.length;
    connections = 0;
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        mailer.send({ to: `burst${i}@example.sk`, subject: `Digest ${i}`, text: "t", html: "h" }),
      ),
    );
    mailer.close();
    expect(received.length - before).toBe(12);
    expect(received.slice(before).every((r) => r.user === "holder")).toBe(true);
    expect(connections).toBeGreaterThan(0);
    expect(connections).toBeLessThanOrEqual(SMTP_CONNECTIONS);
  });

  it("gives up on a server that accepts the connection but never greets, after its timeout", async () => {
    const silent = net.createServer(() => {});
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const mailer = createSmtpMailer({
      url: `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      from: "a@example.sk",
      timeoutMs: 300,
    });
    const error = await mailer.send({ to: "jana@example.sk", subject: "s", text: "t", html: "h" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    mailer.close();
    silent.close();
    expect(error).toBeInstanceOf(HolderError);
    expect((error as HolderError).message).toMatch(
      /^the mail server did not accept the message \(ETIMEDOUT\)/,
    );
  }, 10_000);

  it("refuses bad URLs and a missing sender without echoing the URL", () => {
    expect(() => createSmtpMailer({ url: "http://user:pw@host", from: "a@b.sk" })).toThrow(
      "must start with smtp:// or smtps://",
    );
    expect(() => createSmtpMailer({ url: "not a url pw123", from: "a@b.sk" })).toThrow(/cannot be parsed/);
    try {
      createSmtpMailer({ url: "not a url pw123", from: "a@b.sk" });
    } catch (error) {
      expect((error as Error).message).not.toContain("pw123");
    }
    expect(() => createSmtpMailer({ url: "smtp://h:25", from: " " })).toThrow(
      "sender address (from) is required",
    );
  });
});
