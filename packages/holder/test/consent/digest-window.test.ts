/**
 * Issue 14: the digest window. A person gets at most one match digest per intent per window
 * (DIGEST_WINDOW_MS), however often catalogue imports bring offers: the first digest goes at once,
 * a match within the window marks the intent due at the window's end, and the holder's minute
 * timer (sendDueDigests) then mails one digest carrying every match since. Mail goes through a real
 * SMTP server on loopback; the clock is the test's.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type Database, migrate, type PackageMigrations, sql } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holderMigrations } from "../../src/app/migrations.js";
import { createConsentService, DIGEST_WINDOW_MS } from "../../src/consent/index.js";
import type { Mailer } from "../../src/mail/mailer.js";
import { createSmtpMailer, type SmtpMailer } from "../../src/mail/smtp.js";
import type { ReplyOfferInput } from "../../src/model/services.js";
import { createTestHolderContext, HOUR, MINUTE, type TestHolderContext } from "../../src/testing.js";
import { activeIntent as confirmedOn, holderOn, recordMatch } from "../support/intents-harness.js";
import {
  activeIntent,
  type CatalogueOfferInput,
  mailsTo,
  octaviaWanted,
  type ServicesHolder,
  startServices,
} from "../support/services-harness.js";

/** What the loopback SMTP server accepted: recipient and subject of each message. */
interface Accepted {
  to: string;
  subject: string;
}

const accepted: Accepted[] = [];
let refusing = false;
let server: SMTPServer;
let smtpUrl = "";
const mailers: SmtpMailer[] = [];

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!refusing) return callback();
      const error = new Error("mailbox unavailable") as Error & { responseCode: number };
      error.responseCode = 450;
      callback(error);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const subject = /^Subject: (.*)$/m.exec(raw)?.[1] ?? "";
        for (const to of session.envelope.rcptTo) accepted.push({ to: to.address, subject });
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  smtpUrl = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const mailer of mailers) mailer.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A mailer to the SMTP server that also keeps what it accepted in the local mailbox, to read. */
function overSmtp(mailbox: TestHolderContext["mailbox"]): Mailer {
  const smtp = createSmtpMailer({ url: smtpUrl, from: "no-reply@intents.example.sk" });
  mailers.push(smtp);
  return {
    kind: "smtp",
    async send(message) {
      await smtp.send(message);
      await mailbox.send(message);
    },
  };
}

const startOverSmtp = (engine: Parameters<typeof startServices>[0]) =>
  startServices(engine, { mailer: overSmtp });

/** The digests the SMTP server accepted for `to`. */
const digestsTo = (to: string) =>
  accepted.filter((mail) => mail.to === to && / new offers? for your intent$/.test(mail.subject));

const octavia = (ref: string, price = 12_000): CatalogueOfferInput => ({
  source: { kind: "catalogue", ref, seller: "Auto Bratislava" },
  title: `Škoda Octavia ${ref}`,
  category: "vehicles",
  price: { amount: price, currency: "EUR" },
  location: { country: "SK", region: "SK-BL" },
  attributes: { make: "Škoda", model: "Octavia" },
});

async function digestState(h: ServicesHolder, intentId: string) {
  const row = await h.ctx.store.db
    .selectFrom("holder_intents")
    .select(["digested_at", "digest_due_at", "mailed_at"])
    .where("id", "=", intentId)
    .executeTakeFirstOrThrow();
  const ms = (value: number | null) => (value === null ? null : Number(value));
  return { digestedAt: ms(row.digested_at), dueAt: ms(row.digest_due_at), mailedAt: ms(row.mailed_at) };
}

/**
 * Counts the updates of one intent row from now on: PostgreSQL gives every row version a new
 * xmin; SQLite counts through a temporary trigger (the store has one connection).
 */
async function countIntentWrites(h: ServicesHolder, intentId: string): Promise<() => Promise<number>> {
  const { db } = h.ctx.store;
  if (h.ctx.store.dialect === "postgres") {
    const version = async () =>
      (
        await sql<{ v: string }>`select xmin::text as v from holder_intents where id = ${intentId}`.execute(
          db,
        )
      ).rows[0]?.v;
    const first = await version();
    return async () => ((await version()) === first ? 0 : 1);
  }
  await sql`create temp table if not exists intent_writes (n integer not null)`.execute(db);
  await sql`delete from intent_writes`.execute(db);
  await sql`insert into intent_writes (n) values (0)`.execute(db);
  await sql
    .raw(`create temp trigger if not exists intent_written after update on main.holder_intents
    when new.id = '${intentId.replace(/'/g, "''")}' begin update intent_writes set n = n + 1; end`)
    .execute(db);
  return async () => (await sql<{ n: number }>`select n from intent_writes`.execute(db)).rows[0]?.n ?? -1;
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("the first digest goes at once; an import within the window mails nothing and marks the intent due", async () => {
    const h = await startOverSmtp(engine);
    const email = `first.${engine.dialect}@example.sk`;
    const buyer = await activeIntent(h, email, octaviaWanted());

    expect((await h.services.offers.importCatalogue([octavia("W1-A")])).matched).toBe(1);
    expect(digestsTo(email)).toHaveLength(1);
    const sentAt = h.clock.now();
    expect(await digestState(h, buyer.intentId)).toMatchObject({ digestedAt: sentAt, dueAt: null });

    h.clock.advance(60_000);
    expect((await h.services.offers.importCatalogue([octavia("W1-B")])).matched).toBe(1);
    expect(digestsTo(email)).toHaveLength(1);
    expect(await digestState(h, buyer.intentId)).toMatchObject({
      digestedAt: sentAt,
      dueAt: sentAt + DIGEST_WINDOW_MS,
    });
    // Not yet due: the minute timer leaves it.
    h.clock.advance(DIGEST_WINDOW_MS - 2 * 60_000);
    expect(await h.services.consent.sendDueDigests()).toBe(0);
    expect(digestsTo(email)).toHaveLength(1);
  });

  it("an intent already marked due is not written again by later imports within the window", async () => {
    const h = await startOverSmtp(engine);
    const email = `rewrites.${engine.dialect}@example.sk`;
    const buyer = await activeIntent(h, email, octaviaWanted());
    await h.services.offers.importCatalogue([octavia("W7-A")]);
    h.clock.advance(60_000);
    await h.services.offers.importCatalogue([octavia("W7-B")]); // marks it due
    const writes = await countIntentWrites(h, buyer.intentId);
    const due = await digestState(h, buyer.intentId);

    for (const ref of ["W7-C", "W7-D", "W7-E"]) {
      h.clock.advance(60_000);
      expect((await h.services.offers.importCatalogue([octavia(ref)])).matched).toBe(1);
    }
    expect(await writes()).toBe(0);
    expect(await digestState(h, buyer.intentId)).toEqual(due);
    expect(digestsTo(email)).toHaveLength(1);
  });

  it("after the window the timer mails one digest carrying every later match, 20 listed and the rest counted", async () => {
    const h = await startOverSmtp(engine);
    const email = `later.${engine.dialect}@example.sk`;
    const buyer = await activeIntent(h, email, octaviaWanted());
    await h.services.offers.importCatalogue([octavia("W2-first")]);
    expect(digestsTo(email)).toHaveLength(1);
    const sentAt = h.clock.now();

    // Three imports in the window: 22 offers, no mail.
    for (const batch of [0, 1, 2]) {
      h.clock.advance(3 * 60_000);
      const offers = Array.from({ length: batch === 0 ? 20 : 1 }, (_, i) => octavia(`W2-${batch}-${i}`));
      await h.services.offers.importCatalogue(offers);
    }
    expect(digestsTo(email)).toHaveLength(1);

    h.clock.set(sentAt + DIGEST_WINDOW_MS);
    expect(await h.services.consent.sendDueDigests()).toBe(22);
    expect(digestsTo(email)).toHaveLength(2);
    const [digest] = await mailsTo(h, email);
    expect(digest?.subject).toBe("22 new offers for your intent");
    expect(digest?.text).toContain("Škoda Octavia W2-2-0"); // the newest
    expect(digest?.text).not.toContain("W2-first"); // mailed in the first digest
    expect(digest?.text).toContain("and 2 more on your manage page");
    expect(await digestState(h, buyer.intentId)).toMatchObject({
      digestedAt: sentAt + DIGEST_WINDOW_MS,
      dueAt: null,
    });
    expect(await h.services.consent.sendDueDigests()).toBe(0);
    expect(digestsTo(email)).toHaveLength(2);

    // A quiet window later, the next match goes at once again.
    h.clock.advance(DIGEST_WINDOW_MS);
    await h.services.offers.importCatalogue([octavia("W2-after")]);
    expect(digestsTo(email)).toHaveLength(3);
  });

  it("a seller's reply within the window rides with the due digest", async () => {
    const h = await startOverSmtp(engine);
    const email = `reply.${engine.dialect}@example.sk`;
    const buyer = await activeIntent(h, email, octaviaWanted({ visibility: "pseudonymous" }));
    await h.services.offers.importCatalogue([octavia("W3-first")]);
    const sentAt = h.clock.now();
    h.clock.advance(60_000);
    const reply: ReplyOfferInput = {
      source: { kind: "reply", ref: "W3-quote", seller: "Seller W3" },
      inReplyTo: buyer.intentId,
      title: "Škoda Octavia from a seller",
      category: "vehicles",
      price: { amount: 13_500, currency: "EUR" },
      location: { country: "SK", region: "SK-BL" },
      attributes: { make: "Škoda", model: "Octavia", year: 2019 },
    };
    expect(await h.services.offers.submitReply(reply)).toEqual({ accepted: true });
    h.clock.advance(60_000);
    await h.services.offers.importCatalogue([octavia("W3-second")]);
    expect(digestsTo(email)).toHaveLength(1);

    h.clock.set(sentAt + DIGEST_WINDOW_MS);
    expect(await h.services.consent.sendDueDigests()).toBe(2);
    const [digest] = await mailsTo(h, email);
    expect(digest?.subject).toBe("2 new offers for your intent");
    expect(digest?.text).toContain("Škoda Octavia from a seller");
    expect(digest?.text).toContain("Škoda Octavia W3-second");
    expect(digestsTo(email)).toHaveLength(2);
  });

  it("two timers at once mail a due digest once", async () => {
    const h = await startOverSmtp(engine);
    const email = `race.${engine.dialect}@example.sk`;
    await activeIntent(h, email, octaviaWanted());
    await h.services.offers.importCatalogue([octavia("W4-first")]);
    const sentAt = h.clock.now();
    h.clock.advance(60_000);
    await h.services.offers.importCatalogue([octavia("W4-a"), octavia("W4-b"), octavia("W4-c")]);
    expect(digestsTo(email)).toHaveLength(1);
    h.clock.set(sentAt + DIGEST_WINDOW_MS + 60_000);

    // PostgreSQL: a second pool on the same database, as a second holder process has. SQLite: one
    // process owns the file, so the race is on one handle.
    const handle = engine.dialect === "postgres" ? await engine.connect() : undefined;
    const second =
      handle === undefined
        ? h.services.consent
        : createConsentService({
            ...(await createTestHolderContext(handle, h.clock.now)),
            mailer: overSmtp(h.ctx.mailbox),
          });
    try {
      const counts = await Promise.all([
        h.services.consent.sendDueDigests(),
        second.sendDueDigests(),
        h.services.consent.sendDueDigests(),
        second.sendDueDigests(),
      ]);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
      expect(digestsTo(email)).toHaveLength(2);
      expect((await mailsTo(h, email))[0]?.subject).toBe("3 new offers for your intent");
    } finally {
      await handle?.close();
    }
  });

  it("a failed send counts for the window: neither the timer nor an import tries again before it ends, then it is mailed", async () => {
    const h = await startOverSmtp(engine);
    const email = `fails.${engine.dialect}@example.sk`;
    const buyer = await activeIntent(h, email, octaviaWanted());
    await h.services.offers.importCatalogue([octavia("W5-first")]);
    const sentAt = h.clock.now();
    h.clock.advance(60_000);
    await h.services.offers.importCatalogue([octavia("W5-a"), octavia("W5-b")]);
    const waiting = await digestState(h, buyer.intentId);

    h.clock.set(sentAt + DIGEST_WINDOW_MS);
    refusing = true;
    try {
      expect(await h.services.consent.sendDueDigests()).toBe(0);
    } finally {
      refusing = false;
    }
    expect(digestsTo(email)).toHaveLength(1);
    const failed = await digestState(h, buyer.intentId);
    expect(failed.mailedAt).toBe(waiting.mailedAt); // the watermark went back
    const triedAt = h.clock.now();
    expect(failed.digestedAt).toBe(triedAt); // the try counts for the window
    expect(failed.dueAt).toBe(triedAt + DIGEST_WINDOW_MS);

    // Neither the next minute's timer nor an import tries the address again within the window.
    h.clock.advance(60_000);
    expect(await h.services.consent.sendDueDigests()).toBe(0);
    await h.services.offers.importCatalogue([octavia("W5-c")]);
    expect(digestsTo(email)).toHaveLength(1);

    h.clock.set(triedAt + DIGEST_WINDOW_MS);
    expect(await h.services.consent.sendDueDigests()).toBe(3);
    expect(digestsTo(email)).toHaveLength(2);
    expect((await digestState(h, buyer.intentId)).dueAt).toBeNull();
  });

  it("the window is the holder's setting: with an hour, a match 20 minutes after a digest waits the hour", async () => {
    const h = await holderOn(engine, {
      config: { digestWindowMs: HOUR },
      ctx: (base) => ({ ...base, mailer: overSmtp(base.mailbox) }),
    });
    const email = `hour.${engine.dialect}@example.sk`;
    const flow = await confirmedOn(h, email);
    h.clock.advance(1_000);
    await recordMatch(h, flow.intent.id, {
      id: "W6-a",
      title: "Octavia one",
      price: 12_000,
      at: h.clock.now(),
    });
    h.clock.advance(1_000);
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(1);
    const sentAt = h.clock.now();

    h.clock.advance(20 * MINUTE);
    await recordMatch(h, flow.intent.id, {
      id: "W6-b",
      title: "Octavia two",
      price: 12_000,
      at: h.clock.now(),
    });
    h.clock.advance(1_000);
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(0);
    h.clock.set(sentAt + HOUR - MINUTE);
    expect(await h.consent.sendDueDigests()).toBe(0);
    expect(digestsTo(email)).toHaveLength(1);
    h.clock.set(sentAt + HOUR);
    expect(await h.consent.sendDueDigests()).toBe(1);
    expect(digestsTo(email)).toHaveLength(2);
  });

  it("a database from before the window upgrades: both columns arrive empty and nothing is due", async () => {
    const fresh = await engine.createDatabase();
    const before: PackageMigrations = {
      package: "holder",
      migrations: holderMigrations.migrations.slice(0, 4),
    };
    await migrate(fresh.db, [before]);
    // Version 4's shape, written untyped: an intent mailed long ago.
    const raw = (fresh.db as unknown as Database<Record<string, Record<string, unknown>>>).db;
    await raw
      .insertInto("holder_intents")
      .values({
        id: "int_before",
        code_hash: "h",
        status: "active",
        statement: "an Octavia",
        country: "SK",
        valid_until: 9_000_000_000_000,
        visibility: "public",
        created_at: 1_000,
        updated_at: 1_000,
        confirmed_at: 1_000,
        matching_since: 1_000,
        mailed_at: 2_000,
        mailed_seq: 0,
      })
      .execute();
    const ctx = await createTestHolderContext(fresh.db, () => 10_000);
    const row = await ctx.store.db
      .selectFrom("holder_intents")
      .select(["digested_at", "digest_due_at"])
      .where("id", "=", "int_before")
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ digested_at: null, digest_due_at: null });
    expect(await createConsentService(ctx).sendDueDigests()).toBe(0);
  });
});
