/**
 * Consent-link rule 3: taking over a draft is first-come. Once a person has given consent, the
 * same link cannot be taken over again — not later, and not by a submission racing the first.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mailer } from "../../src/mail/mailer.js";
import { holderOn, publishDraft, refusal, tokenOf } from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("a link that has been used shows 'taken' and refuses a second person", async () => {
    const h = await holderOn(engine);
    const { consentUrl, intent } = await publishDraft(h);
    const token = tokenOf(consentUrl);
    expect(await h.consent.giveConsent(token, { email: "first@example.sk", accepted: true })).toEqual({
      sentTo: "your e-mail",
    });
    expect(await h.consent.consentView(token)).toEqual({ state: "taken" });

    const error = await refusal(h.consent.giveConsent(token, { email: "second@example.sk", accepted: true }));
    expect(error.code).toBe("ERR_HOLDER_CONFLICT");
    expect(error.message).toContain("already been given");

    const mails = await h.mailbox.listMailbox();
    expect(mails.map((m) => m.to)).toEqual(["first@example.sk"]);
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row.contact_hash).toBe(h.ctx.contacts.hash("first@example.sk"));
    // The bare hash is gone: nothing can look the link up to give consent with it.
    expect(row.consent_token_hash?.startsWith("taken.")).toBe(true);
    expect(h.ctx.codes.lookupHashes(token)).not.toContain(row.consent_token_hash);
  });

  it("the same link stays taken after confirmation and after withdrawal", async () => {
    const h = await holderOn(engine);
    const { consentUrl, intentCode } = await publishDraft(h);
    const token = tokenOf(consentUrl);
    await h.consent.giveConsent(token, { email: "first@example.sk", accepted: true });
    const [mail] = await h.mailbox.listMailbox();
    await h.consent.confirmEmail(/\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1] ?? "");
    expect(await h.consent.consentView(token)).toEqual({ state: "taken" });
    const principal = await h.intents.principalForCode(intentCode);
    await h.intents.withdraw(principal as never);
    expect(await h.consent.consentView(token)).toEqual({ state: "taken" });
    expect(
      (await refusal(h.consent.giveConsent(token, { email: "late@example.sk", accepted: true }))).code,
    ).toBe("ERR_HOLDER_CONFLICT");
  });

  it("of concurrent submissions exactly one wins and exactly one confirmation mail goes out", async () => {
    const h = await holderOn(engine);
    for (let round = 0; round < 3; round++) {
      const { consentUrl, intent } = await publishDraft(h);
      const token = tokenOf(consentUrl);
      const emails = Array.from({ length: 8 }, (_, i) => `racer${round}-${i}@example.sk`);
      const results = await Promise.allSettled(
        emails.map((email) => h.consent.giveConsent(token, { email, accepted: true })),
      );
      const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [emails[i]] : []));
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect((r.reason as { code: string }).code).toBe("ERR_HOLDER_CONFLICT");
      }
      const sent = (await h.mailbox.listMailbox()).filter((m) => m.to.startsWith(`racer${round}-`));
      expect(sent.map((m) => m.to)).toEqual(won);
      const row = await h.ctx.store.db
        .selectFrom("holder_intents")
        .selectAll()
        .where("id", "=", intent.id)
        .executeTakeFirstOrThrow();
      expect(row.contact_hash).toBe(h.ctx.contacts.hash(won[0] as string));
    }
  });

  it("on PostgreSQL and SQLite, racers on separate connections still yield one winner", async () => {
    const h = await holderOn(engine);
    const { consentUrl } = await publishDraft(h);
    const token = tokenOf(consentUrl);
    const other = await engine.connect();
    const { createTestHolderContext } = await import("../../src/testing.js");
    const { createConsentService } = await import("../../src/consent/index.js");
    const ctx2 = await createTestHolderContext(other, h.clock.now);
    const consent2 = createConsentService(ctx2);
    const results = await Promise.allSettled([
      h.consent.giveConsent(token, { email: "left@example.sk", accepted: true }),
      consent2.giveConsent(token, { email: "right@example.sk", accepted: true }),
      h.consent.giveConsent(token, { email: "left2@example.sk", accepted: true }),
      consent2.giveConsent(token, { email: "right2@example.sk", accepted: true }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await h.mailbox.listMailbox()).toHaveLength(1);
  });

  it("when the confirmation mail cannot be sent, the link is given back and nothing is kept", async () => {
    let fail = true;
    const h = await holderOn(engine, {
      ctx: (base) => ({
        ...base,
        mailer: {
          kind: "smtp",
          send: async (message) => {
            if (fail) throw new Error(`550 mailbox unavailable: ${message.to}`);
            await base.mailbox.send(message);
          },
        } satisfies Mailer,
      }),
    });
    const { consentUrl, intent } = await publishDraft(h);
    const token = tokenOf(consentUrl);
    const error = await refusal(h.consent.giveConsent(token, { email: "jana@example.sk", accepted: true }));
    expect(error.code).toBe("ERR_HOLDER_UNAVAILABLE");
    expect(error.message).not.toContain("jana@example.sk");
    expect((await h.consent.consentView(token)).state).toBe("open");
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: "awaiting_consent",
      contact_sealed: null,
      contact_hash: null,
      confirm_token_hash: null,
    });
    expect(h.base.logLines.join("\n")).not.toContain("jana@example.sk");

    fail = false;
    await h.consent.giveConsent(token, { email: "jana@example.sk", accepted: true });
    expect((await h.consent.consentView(token)).state).toBe("taken");
    expect((await h.mailbox.listMailbox()).map((m) => m.to)).toEqual(["jana@example.sk"]);
  });

  it("an unknown, malformed, expired or withdrawn link gives no consent", async () => {
    const h = await holderOn(engine);
    expect(await h.consent.consentView("A".repeat(32))).toEqual({ state: "unknown" });
    expect(await h.consent.consentView("../../etc/passwd")).toEqual({ state: "unknown" });
    expect(
      (await refusal(h.consent.giveConsent("A".repeat(32), { email: "a@example.sk", accepted: true }))).code,
    ).toBe("ERR_HOLDER_NOT_FOUND");

    const withdrawn = await publishDraft(h);
    const principal = await h.intents.principalForCode(withdrawn.intentCode);
    await h.intents.withdraw(principal as never);
    expect(await h.consent.consentView(tokenOf(withdrawn.consentUrl))).toEqual({ state: "expired" });
    expect(
      (
        await refusal(
          h.consent.giveConsent(tokenOf(withdrawn.consentUrl), { email: "a@example.sk", accepted: true }),
        )
      ).code,
    ).toBe("ERR_HOLDER_GONE");

    const expired = await publishDraft(h);
    h.clock.advance(24 * 60 * 60 * 1000);
    expect(await h.consent.consentView(tokenOf(expired.consentUrl))).toEqual({ state: "expired" });
    expect(
      (
        await refusal(
          h.consent.giveConsent(tokenOf(expired.consentUrl), { email: "a@example.sk", accepted: true }),
        )
      ).code,
    ).toBe("ERR_HOLDER_GONE");
    expect(await h.mailbox.listMailbox()).toEqual([]);
  });
});
