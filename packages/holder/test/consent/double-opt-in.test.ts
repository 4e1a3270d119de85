/**
 * Consent-link rule 2, second half: the person enters their own e-mail and agrees on the holder's
 * page; the holder verifies the channel (double opt-in); only then is the intent active.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contactAad, openContact } from "../../src/intents/index.js";
import { normaliseEmail } from "../../src/mail/address.js";
import {
  basicIntent,
  DAY,
  holderOn,
  linksInMail,
  publishDraft,
  refusal,
  T0,
  tokenOf,
} from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("the consent page shows the statement, the consent text and its version", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    const view = await h.consent.consentView(tokenOf(published.consentUrl));
    expect(view).toEqual({
      state: "open",
      intent: published.intent,
      consentText: h.ctx.config.consentText,
      consentVersion: h.ctx.config.consentVersion,
    });
  });

  it("consent seals the address, mails confirm and manage links, and waits for the click", async () => {
    const h = await holderOn(engine, { config: { publicUrl: "https://intents.example.sk" } });
    const published = await publishDraft(h, basicIntent({ statement: "A <b>flat</b> & a garage" }));
    h.clock.advance(60_000);
    await h.consent.giveConsent(tokenOf(published.consentUrl), {
      email: "  Jana.Novakova@Example.SK ",
      accepted: true,
    });

    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", published.intent.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: "awaiting_email_confirmation",
      consent_version: h.ctx.config.consentVersion,
      consented_at: T0 + 60_000,
      confirm_expires_at: T0 + 60_000 + h.ctx.config.confirmTtlMs,
      confirmed_at: null,
      contact_hash: h.ctx.contacts.hash("jana.novakova@example.sk"),
    });
    expect(JSON.stringify(row)).not.toMatch(/jana/i);
    const contact = openContact(h.ctx, row.id, row.contact_sealed as string);
    expect(contact.email).toBe("Jana.Novakova@example.sk");
    expect(() => h.ctx.sealer.openText(row.contact_sealed as string, contactAad("int_other"))).toThrow();

    const { mail, confirm, manage } = await linksInMail(h, "Jana.Novakova@example.sk");
    expect(mail.to).toBe("Jana.Novakova@example.sk");
    expect(mail.subject).toBe("Confirm your intent at Doorbell intent holder");
    expect(mail.text).toContain(`https://intents.example.sk/confirm/${confirm}`);
    expect(mail.text).toContain(`https://intents.example.sk/manage/${manage}`);
    expect(mail.html).toContain(`href="https://intents.example.sk/confirm/${confirm}"`);
    expect(mail.html).toContain(`href="https://intents.example.sk/manage/${manage}"`);
    expect(mail.text).toContain("A <b>flat</b> & a garage");
    expect(mail.html).toContain("A &lt;b&gt;flat&lt;/b&gt; &amp; a garage");
    expect(mail.html).not.toContain("<b>flat");
    expect(manage).toBe(contact.manageToken);
    expect(h.ctx.codes.verify(confirm as string, row.confirm_token_hash as string)).toBe(true);
    expect(h.ctx.codes.verify(manage as string, row.manage_token_hash as string)).toBe(true);

    // Not active yet: the code shows the state, matching has not heard of it.
    const principal = await h.intents.principalForCode(published.intentCode);
    expect((await h.intents.get(principal as never)).status).toBe("awaiting_email_confirmation");
    expect(h.calls).toEqual([]);
    // The manage link already works (the person may withdraw before confirming).
    expect((await h.consent.manageView(manage as string)).intent.status).toBe("awaiting_email_confirmation");
  });

  it("the confirm link activates once, calls onActivated once, and a second click changes nothing", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    const { confirm } = await linksInMail(h, "a@example.sk");
    h.clock.advance(5 * 60_000);
    const intent = await h.consent.confirmEmail(confirm as string);
    expect(intent.status).toBe("active");
    expect(intent.draftExpiresAt).toBeUndefined();
    const again = await h.consent.confirmEmail(confirm as string);
    expect(again).toEqual(intent);
    expect(h.calls).toEqual([{ hook: "onActivated", intentId: intent.id }]);
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row.confirmed_at).toBe(T0 + 5 * 60_000);
  });

  it("a confirm link past its time does not activate", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    const { confirm } = await linksInMail(h, "a@example.sk");
    h.clock.advance(h.ctx.config.confirmTtlMs);
    const error = await refusal(h.consent.confirmEmail(confirm as string));
    expect(error.code).toBe("ERR_HOLDER_GONE");
    expect(error.message).toContain("expired before it was confirmed");
    expect(h.calls).toEqual([]);
  });

  it("the confirm link never outlives the intent's validUntil", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(
      h,
      basicIntent({ validUntil: new Date(T0 + 6 * 60 * 60 * 1000).toISOString() }),
    );
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    const row = await h.ctx.store.db.selectFrom("holder_intents").selectAll().executeTakeFirstOrThrow();
    expect(row.confirm_expires_at).toBe(T0 + 6 * 60 * 60 * 1000);
  });

  it("unknown, malformed and withdrawn confirm links are refused", async () => {
    const h = await holderOn(engine);
    expect((await refusal(h.consent.confirmEmail("B".repeat(32)))).code).toBe("ERR_HOLDER_NOT_FOUND");
    expect((await refusal(h.consent.confirmEmail("not a token"))).code).toBe("ERR_HOLDER_NOT_FOUND");
    const published = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    const { confirm, manage } = await linksInMail(h, "a@example.sk");
    await h.consent.withdrawByManageToken(manage as string);
    const error = await refusal(h.consent.confirmEmail(confirm as string));
    expect(error.code).toBe("ERR_HOLDER_GONE");
    expect(error.message).toContain("withdrawn");
    expect(h.calls).toEqual([]);
  });

  it("consent must be accepted", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    for (const accepted of [false, "yes", undefined]) {
      const error = await refusal(
        h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted } as never),
      );
      expect(error.code).toBe("ERR_HOLDER_INVALID");
      expect(error.message).toContain("needs your consent");
    }
    expect((await h.consent.consentView(tokenOf(published.consentUrl))).state).toBe("open");
    expect(await h.mailbox.listMailbox()).toEqual([]);
  });

  it.each([
    ["", "the e-mail address is empty"],
    ["jana", "needs exactly one @"],
    ["jana@@example.sk", "needs exactly one @"],
    ["@mail.example", "the part before @ is empty"],
    ["jana@", "the part after @ is empty"],
    ["jana..novak@example.sk", "may hold only letters"],
    [".jana@example.sk", "may hold only letters"],
    ['"jana"@example.sk', "may hold only letters"],
    ["jána@example.sk", "may hold only letters"],
    ["jana@localhost", "not a valid domain name"],
    ["jana@[127.0.0.1]", "not an IP address"],
    ["jana@exa_mple.sk", "not a valid domain name"],
    ["jana@-example.sk", "not a valid domain name"],
    ["jana@example.s", "not a valid domain name"],
    ["jana@example.123", "not a valid domain name"],
    [`${"j".repeat(65)}@example.sk`, "longer than 64"],
    [`jana@${"a".repeat(250)}.sk`, "longer than 254"],
    ["jana@example.sk\nBcc: x@evil.example", "must not contain spaces, line breaks"],
    ["jana@example.sk\r\nbcc", "must not contain spaces, line breaks"],
    ["jana@exa\u200Bmple.sk", "invisible characters"],
    ["jana@exa$mple.sk", "not a valid domain name"],
    ["ja na@example.sk", "must not contain spaces"],
  ])("refuses %j with a message that does not repeat it", async (email, message) => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    const error = await refusal(
      h.consent.giveConsent(tokenOf(published.consentUrl), { email, accepted: true }),
    );
    expect(error.code).toBe("ERR_HOLDER_INVALID");
    expect(error.message).toContain(message);
    if (email.length > 3) expect(error.message).not.toContain(email);
    expect((await h.consent.consentView(tokenOf(published.consentUrl))).state).toBe("open");
  });

  it("normalises addresses: trims, lower-cases and IDNA-encodes the domain, keeps the local part", () => {
    expect(normaliseEmail(" Jana@Example.SK ")).toEqual({
      address: "Jana@example.sk",
      key: "jana@example.sk",
    });
    expect(normaliseEmail("jan@pošta.sk")).toEqual({
      address: "jan@xn--pota-h6a.sk",
      key: "jan@xn--pota-h6a.sk",
    });
    expect(normaliseEmail("a+tag@sub.example.co.uk").address).toBe("a+tag@sub.example.co.uk");
    expect(() => normaliseEmail(undefined)).toThrow("missing");
  });

  it("a draft that reaches its end while nobody confirmed expires and forgets the address", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    h.clock.advance(2 * DAY);
    expect(await h.intents.expireDue()).toBe(1);
    const row = await h.ctx.store.db.selectFrom("holder_intents").selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "expired", contact_sealed: null, contact_hash: null });
    expect(h.calls).toEqual([]);
  });
});
