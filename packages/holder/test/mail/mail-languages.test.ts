/**
 * Issue 17 item 8: the person's mails speak the language of the consent text they agreed to. The
 * confirmation follows the text given on the page; later mails (the match digest, the withdrawn
 * notice) follow the version the intent records, on SQLite and PostgreSQL. The English mails are
 * unchanged (the other mail tests assert them).
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentTextFor } from "../../src/i18n/consent-texts.js";
import {
  confirmationMail,
  matchDigestMail,
  notificationApprovalMail,
  withdrawnMail,
} from "../../src/mail/templates.js";
import type { Lang } from "../../src/model/languages.js";
import { basicIntent, holderOn, linksInMail, recordMatch, T0, tokenOf } from "../support/intents-harness.js";

const common = {
  holderName: "Doorbell",
  statement: "Byt 3+1 v Brne",
  manageUrl: "https://intents.example.sk/manage/M4n4g3T0k3n000000000000000000000",
};

describe("mail templates per language", () => {
  it.each([
    ["sk", "Potvrďte svoj dopyt v službe Doorbell", "Dobrý deň,", "Ak tlačidlo nefunguje"],
    ["cs", "Potvrďte svou poptávku ve službě Doorbell", "Dobrý den,", "Pokud tlačítko nefunguje"],
  ] as const)(
    "%s: the confirmation mail, its HTML lang and no English left",
    (lang, subject, hello, fallback) => {
      const mail = confirmationMail({
        ...common,
        confirmUrl: "https://intents.example.sk/confirm/C0nf1rmT0k3n00000000000000000000",
        confirmExpiresAt: "2026-12-02T12:00:00.000Z",
        hasHiddenLimit: true,
        lang,
      });
      expect(mail.subject).toBe(subject);
      expect(mail.text.startsWith(hello)).toBe(true);
      expect(mail.text).toContain("2. 12. 2026");
      expect(mail.html).toContain(`<html lang="${lang}">`);
      expect(mail.html).toContain(fallback);
      // (The URLs' host is intents.example.sk: the word is checked on its own.)
      for (const english of [/Hello/, /\bintent\b/, /If the button/, /Manage or withdraw/])
        expect(mail.text + mail.html).not.toMatch(english);
    },
  );

  it("digest subjects count in each language's plural forms; places and prices in its words", () => {
    const item = {
      title: "Byt",
      price: { amount: 6_500_000, currency: "CZK" as const },
      location: { country: "CZ" as const, region: "CZ-64" },
    };
    const subject = (lang: Lang, more: number) =>
      matchDigestMail({ ...common, matches: [item], more, lang }).subject;
    expect([0, 1, 4].map((more) => subject("cs", more))).toEqual([
      "Nová nabídka k vaší poptávce",
      "2 nové nabídky k vaší poptávce",
      "5 nových nabídek k vaší poptávce",
    ]);
    expect([0, 2, 9].map((more) => subject("sk", more))).toEqual([
      "Nová ponuka k vášmu dopytu",
      "3 nové ponuky k vášmu dopytu",
      "10 nových ponúk k vášmu dopytu",
    ]);
    expect(subject("en", 1)).toBe("2 new offers for your intent");
    const text = matchDigestMail({ ...common, matches: [item], more: 0, lang: "cs" }).text.replace(
      /\s+/g,
      " ",
    );
    expect(text).toContain("6 500 000 Kč");
    expect(text).toContain("Jihomoravský kraj, Česko");
  });

  it("the withdrawn notice and the approval request in Slovak", () => {
    const withdrawn = withdrawnMail({ ...common, withdrawnAt: "2026-12-01T10:00:00.000Z", lang: "sk" });
    expect(withdrawn.subject).toBe("Váš dopyt bol zrušený");
    const approval = notificationApprovalMail({
      ...common,
      deliveryHost: "agent.example.sk",
      approveUrl: "https://intents.example.sk/notifications/T0k3n0000000000000000000000000000",
      lang: "sk",
    });
    expect(approval.subject).toBe("Povoliť asistentovi upozornenia na váš dopyt?");
    expect(approval.text).toContain("adresu agent[.]example[.]sk");
    expect(approval.text).toContain("nikdy nie ktoré ponuky");
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("consent given in Czech: the record names the Czech text, and every later mail is Czech", async () => {
    const h = await holderOn(engine);
    const czech = consentTextFor(h.ctx.config, "cs");
    const published = await h.intents.publish(basicIntent());
    await h.consent.giveConsent(tokenOf(published.consentUrl), {
      email: "petra@example.cz",
      accepted: true,
      consentVersion: czech.version,
    });
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .select("consent_version")
      .where("id", "=", published.intent.id)
      .executeTakeFirstOrThrow();
    expect(row.consent_version).toBe(czech.version);
    const { mail, confirm } = await linksInMail(h, "petra@example.cz");
    expect(mail.subject.startsWith("Potvrďte svou poptávku")).toBe(true);
    await h.consent.confirmEmail(confirm as string);

    await recordMatch(h, published.intent.id, { id: "o1", title: "Octavia", price: 12_500, at: T0 + 1000 });
    h.clock.advance(10_000);
    expect(await h.consent.sendMatchDigest(published.intent.id)).toBe(1);
    const [digest] = await h.mailbox.listMailbox({ to: "petra@example.cz", limit: 1 });
    expect(digest?.subject).toBe("Nová nabídka k vaší poptávce");
    expect(digest?.html).toContain('<html lang="cs">');

    const { manage } = await linksInMail(h, "petra@example.cz");
    await h.consent.withdrawByManageToken(manage as string);
    const [notice] = await h.mailbox.listMailbox({ to: "petra@example.cz", limit: 1 });
    expect(notice?.subject).toBe("Vaše poptávka byla zrušena");
  });

  it("a version that is not a current text is refused and records nothing", async () => {
    const h = await holderOn(engine);
    const published = await h.intents.publish(basicIntent());
    await expect(
      h.consent.giveConsent(tokenOf(published.consentUrl), {
        email: "petra@example.cz",
        accepted: true,
        consentVersion: "cs-2020-01-01",
      }),
    ).rejects.toMatchObject({ code: "ERR_HOLDER_CONFLICT" });
    expect((await h.consent.consentView(tokenOf(published.consentUrl))).state).toBe("open");
    expect(await h.mailbox.listMailbox({ to: "petra@example.cz", limit: 1 })).toEqual([]);
  });
});
