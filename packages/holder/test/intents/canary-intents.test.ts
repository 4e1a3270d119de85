/**
 * Privacy by construction: plant a contact, a hidden limit, an intentCode and the page tokens, run
 * the whole flow (and refused calls that carry the canaries), then grep every service result and
 * error, every e-mail, every log line and the intents and mail tables for them.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HolderError } from "../../src/model/types.js";
import {
  basicIntent,
  DAY,
  holderOn,
  linksInMail,
  recordMatch,
  T0,
  tokenOf,
} from "../support/intents-harness.js";

const CONTACT = "Canary.Person.5521@Example.SK";
const CONTACT_SHAPES = ["canary.person.5521", "Canary.Person.5521", "5521@"];
const LIMIT = 73_919;
const LIMIT_SHAPES = ["73919", "73,919", "73 919", "73.919"];

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("no canary appears in any result, error, log line, clear column or mail it must not be in", async () => {
    const h = await holderOn(engine, { service: { oauthAccess: () => true } });
    const results: unknown[] = [];
    const errors: string[] = [];
    const record = async <T>(call: Promise<T>): Promise<T | undefined> => {
      try {
        const value = await call;
        results.push(value);
        return value;
      } catch (error) {
        if (!(error instanceof HolderError)) throw error;
        errors.push(`${error.code} ${error.message}`);
        return undefined;
      }
    };

    // Publish: the one result allowed to hold the code (and the consent link).
    const published = await h.intents.publish(
      basicIntent({ hiddenLimit: LIMIT, visibility: "pseudonymous" }),
    );
    const code = published.intentCode;
    const consentToken = tokenOf(published.consentUrl);
    const pseudonym = (
      await h.ctx.store.db.selectFrom("holder_intents").select("pseudonym").executeTakeFirstOrThrow()
    ).pseudonym;
    expect(pseudonym).toMatch(/^buyer-/);
    results.push(published.intent);

    const principal = await h.intents.principalForCode(code);
    results.push(principal);
    await record(h.intents.get(principal as never));
    await record(h.consent.consentView(consentToken));
    await record(h.consent.giveConsent(consentToken, { email: CONTACT, accepted: true }));
    const { confirm, manage, mail: confirmation } = await linksInMail(h, "Canary.Person.5521@example.sk");
    const confirmToken = confirm as string;
    const manageToken = manage as string;
    await record(h.consent.consentView(consentToken));
    await record(h.consent.giveConsent(consentToken, { email: CONTACT, accepted: true }));
    await record(h.consent.confirmEmail(confirmToken));
    await record(h.consent.confirmEmail(confirmToken));
    await record(h.intents.get(principal as never));
    await record(h.intents.update(principal as never, published.intent.id, { hiddenLimit: LIMIT + 1 }));
    await record(
      h.intents.update({ kind: "oauth", subject: "s", clientId: "c" }, published.intent.id, {
        validUntil: "2027-01-01",
      } as never),
    );
    await recordMatch(h, published.intent.id, {
      id: "o_canary",
      title: "Octavia",
      price: 12_000,
      at: T0 + 1000,
    });
    results.push(await h.consent.sendMatchDigest(published.intent.id));
    await record(h.consent.manageView(manageToken));

    // Refused calls that carry the canaries.
    await record(h.intents.publish({ ...basicIntent(), email: CONTACT } as never));
    await record(h.intents.publish(basicIntent({ hiddenLimit: -LIMIT })));
    await record(h.intents.publish(basicIntent({ hiddenLimit: `${LIMIT}` as never })));
    await record(h.consent.giveConsent(consentToken, { email: `${CONTACT}@x`, accepted: true }));
    await record(h.consent.confirmEmail(`${confirmToken}!`));
    await record(h.consent.manageView(code));
    results.push(
      await h.intents.principalForCode(consentToken),
      await h.intents.principalForCode(confirmToken),
    );

    // The agent withdraws; the person gets the notice; the job runs.
    await record(h.intents.withdraw(principal as never));
    await record(h.consent.withdrawByManageToken(manageToken));
    h.clock.advance(400 * DAY);
    results.push(await h.intents.expireDue());
    expect(errors.length).toBeGreaterThanOrEqual(8);

    const secrets = [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      code,
      code.slice(3),
      consentToken,
      confirmToken,
      manageToken,
    ];
    const outputs = JSON.stringify(results) + errors.join("\n");
    for (const secret of [...secrets, pseudonym as string]) expect(outputs).not.toContain(secret);
    // The publish result carries the code and the consent link, and nothing else secret.
    const publishShown = JSON.stringify(published);
    for (const secret of [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      confirmToken,
      manageToken,
      pseudonym as string,
    ]) {
      expect(publishShown).not.toContain(secret);
    }

    const logs = h.base.logLines.join("\n");
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [...secrets, pseudonym as string, "example.sk"]) expect(logs).not.toContain(secret);

    // Mail goes only to the person, never carries the limit, the code or the consent token.
    const mails = await h.mailbox.listMailbox();
    expect(mails.map((m) => m.subject)).toEqual([
      "Your intent was withdrawn",
      "A new offer for your intent",
      "Confirm your intent at Doorbell intent holder",
    ]);
    expect(mails[2]).toEqual(confirmation);
    for (const mail of mails) {
      expect(mail.to).toBe("Canary.Person.5521@example.sk");
      const body = `${mail.subject}\n${mail.text}\n${mail.html}`;
      for (const secret of [...LIMIT_SHAPES, code, code.slice(3), consentToken, pseudonym as string])
        expect(body).not.toContain(secret);
      expect(body).toContain(`/manage/${manageToken}`);
    }

    // Tables: the intent row in clear holds none of it (after the end even the sealed contact is gone).
    const rows = await h.ctx.store.db.selectFrom("holder_intents").selectAll().execute();
    const stored = JSON.stringify(rows);
    for (const secret of [...secrets]) expect(stored).not.toContain(secret);
    expect(rows[0]).toMatchObject({ contact_sealed: null, contact_hash: null });
    const mailRows = JSON.stringify(await h.ctx.store.db.selectFrom("holder_mail").selectAll().execute());
    for (const secret of [...CONTACT_SHAPES, confirmToken, manageToken, "example.sk"])
      expect(mailRows).not.toContain(secret);
  });

  it("while the intent is active, the sealed columns are the only place the contact and limit live", async () => {
    const h = await holderOn(engine);
    const published = await h.intents.publish(basicIntent({ hiddenLimit: LIMIT }));
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: CONTACT, accepted: true });
    const { confirm } = await linksInMail(h, "Canary.Person.5521@example.sk");
    await h.consent.confirmEmail(confirm as string);
    const row = await h.ctx.store.db.selectFrom("holder_intents").selectAll().executeTakeFirstOrThrow();
    expect(row.contact_sealed).toMatch(/^v1\./);
    expect(row.hidden_limit_sealed).toMatch(/^v1\./);
    const clear = Object.entries(row)
      .filter(([column]) => !column.endsWith("_sealed"))
      .map(([, value]) => String(value))
      .join("\n");
    for (const secret of [
      ...CONTACT_SHAPES,
      ...LIMIT_SHAPES,
      "example.sk",
      published.intentCode.slice(3),
      confirm as string,
    ]) {
      expect(clear).not.toContain(secret);
    }
  });
});
