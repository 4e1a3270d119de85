// Issue #16 item 2 on the consent page: confirmations are mails anyone holding consent links asks
// for, so they are limited per recipient and per link (shared limits in the database,
// both engines); a refusal is a 429 page with Retry-After and leaves the link unused.
import { createCodeHasher, generateKeyEntry, Keyring, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHolderLimits, type HolderLimits, limitsMigrations } from "../../src/limits/index.js";
import { confirmationMail } from "../../src/mail/templates.js";
import {
  carIntent,
  hiddenField,
  type PagesServer,
  startPagesServer,
  statusOf,
  tokenOf,
} from "../support/pages-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let s: PagesServer;
  let limits: HolderLimits;

  beforeAll(async () => {
    await migrate(engine.db, [limitsMigrations]);
    limits = createHolderLimits({
      store: engine.db,
      hasher: createCodeHasher(new Keyring([generateKeyEntry()]), "holder.limits"),
    });
    s = await startPagesServer(engine, { deps: (deps) => ({ ...deps, limits }) });
  });
  afterAll(async () => {
    limits?.close();
    await s?.close();
  });

  const giveConsent = async (email: string, statement?: string) => {
    const published = await s.intents.publish(carIntent(statement === undefined ? {} : { statement }));
    const path = `/consent/${tokenOf(published.consentUrl)}`;
    const person = s.browser();
    const form = await person.get(path);
    const done = await person.post(path, {
      csrf: hiddenField(form.html, "csrf") ?? "",
      consentVersion: s.ctx.config.consentVersion,
      email,
      consent: "yes",
    });
    return { done, intentId: published.intent.id };
  };

  it("sends at most 3 confirmations per recipient; the fourth link stays unused", async () => {
    const email = "victim@example.sk";
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await giveConsent(email));
    expect(answers.map((a) => a.done.status)).toEqual([200, 200, 200, 429]);
    expect(answers[3]?.done.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(answers[3]?.done.html).toContain("Too many e-mails");
    expect(await s.mailbox.listMailbox({ to: email })).toHaveLength(3);
    // Refused before anything was stored: the draft still awaits consent.
    expect(await statusOf(s, answers[3]?.intentId as string)).toBe("awaiting_consent");
  });

  it("stores the recipient and the address only as keyed hashes", async () => {
    const rows = await engine.db.db
      .withTables<{ holder_rate_limits: { key: string } }>()
      .selectFrom("holder_rate_limits")
      .select("key")
      .execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.key).not.toMatch(/victim|example\.sk|127\.0\.0\.1|consent:/);
  });
});

describe("client-supplied text in mails", () => {
  it("is quoted as data, capped, never a link", () => {
    const mail = confirmationMail({
      holderName: "Test holder",
      statement: `Cheap flat! Pay the deposit at https://evil.example/pay or www.evil.example\u202e now. ${"x".repeat(2000)}`,
      manageUrl: "https://intents.example.sk/manage/t",
      confirmUrl: "https://intents.example.sk/confirm/c",
      confirmExpiresAt: "2026-12-03T10:00:00.000Z",
      hasHiddenLimit: false,
    });
    expect(mail.text).toContain(
      "> Cheap flat! Pay the deposit at https[:]//evil[.]example/pay or www[.]evil[.]example now.",
    );
    expect(mail.text).not.toContain("evil.example");
    expect(mail.html).not.toContain("evil.example");
    expect(mail.text).not.toContain("\u202e");
    expect(mail.text).not.toContain("x".repeat(1000));
    // The holder's own links stay links.
    expect(mail.html).toContain('href="https://intents.example.sk/confirm/c"');
  });
});
