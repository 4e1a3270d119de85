/**
 * Consent-link rule 1: intent_publish_intent takes no contact data and stores a draft that is not
 * an intent (never activated by itself), expires within 24 hours; rule 2: the result carries an
 * intentCode of at least 128 random bits, stored only as a keyed hash, and a consentUrl on the
 * holder's own domain.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicIntent, DAY, HOUR, holderOn, refusal, T0, tokenOf } from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("publishes a draft awaiting consent that ends at most 24 h after publishing", async () => {
    const h = await holderOn(engine);
    const result = await h.intents.publish(basicIntent());
    expect(result.intent.status).toBe("awaiting_consent");
    expect(result.intent.createdAt).toBe(new Date(T0).toISOString());
    expect(result.intent.draftExpiresAt).toBe(new Date(T0 + DAY).toISOString());
    expect(result.intent.hasHiddenLimit).toBe(false);
    expect(result.intent.visibility).toBe("private");
    expect(result.intent.validUntil).toBe(new Date(T0 + 30 * DAY).toISOString());
    expect(h.calls).toEqual([]);
    const row = await h.ctx.store.db.selectFrom("holder_intents").selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: "awaiting_consent",
      contact_sealed: null,
      contact_hash: null,
      draft_expires_at: T0 + DAY,
    });
  });

  it("never keeps a draft longer than 24 h, whatever draftTtlMs says, nor past validUntil", async () => {
    const h = await holderOn(engine, { config: { draftTtlMs: 3 * DAY } });
    const long = await h.intents.publish(basicIntent());
    expect(long.intent.draftExpiresAt).toBe(new Date(T0 + DAY).toISOString());
    const short = await h.intents.publish(basicIntent({ validUntil: new Date(T0 + 2 * HOUR).toISOString() }));
    expect(short.intent.draftExpiresAt).toBe(new Date(T0 + 2 * HOUR).toISOString());
  });

  it.each([
    ["email", "jana@example.sk"],
    ["phone", "+421900123456"],
    ["name", "Jana Nováková"],
    ["contact", { email: "jana@example.sk" }],
  ])("refuses a contact field (%s) and stores nothing", async (field, value) => {
    const h = await holderOn(engine);
    const error = await refusal(h.intents.publish({ ...basicIntent(), [field]: value } as never));
    expect(error.code).toBe("ERR_HOLDER_INVALID");
    expect(error.message).toContain(`no field "${field}"`);
    expect(error.message).toContain("takes no contact data");
    const rows = await h.ctx.store.db.selectFrom("holder_intents").select("id").execute();
    expect(rows).toEqual([]);
  });

  it("returns an intentCode of ≥ 128 random bits, different every time, stored only as a keyed hash", async () => {
    const h = await holderOn(engine);
    const codes = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { intentCode } = await h.intents.publish(basicIntent());
      expect(intentCode).toMatch(/^ic_[0-9A-Za-z]{32,}$/);
      // 32 base62 characters carry 32 × log2(62) ≈ 190 bits.
      expect((intentCode.length - 3) * Math.log2(62)).toBeGreaterThanOrEqual(128);
      codes.add(intentCode);
    }
    expect(codes.size).toBe(20);
    const rows = await h.ctx.store.db.selectFrom("holder_intents").selectAll().execute();
    const dump = JSON.stringify(rows);
    for (const code of codes) {
      expect(dump).not.toContain(code);
      expect(dump).not.toContain(code.slice(3));
    }
    for (const row of rows) expect(row.code_hash).toMatch(/^h1\./);
  });

  it("gives a consentUrl on the holder's own origin with a token separate from the code", async () => {
    const h = await holderOn(engine, { config: { publicUrl: "https://intents.example.sk" } });
    const { consentUrl, intentCode } = await h.intents.publish(basicIntent());
    expect(consentUrl).toMatch(/^https:\/\/intents\.example\.sk\/consent\/[0-9A-Za-z]{32}$/);
    expect(consentUrl).not.toContain(intentCode.slice(3));
    const row = await h.ctx.store.db.selectFrom("holder_intents").selectAll().executeTakeFirstOrThrow();
    expect(row.consent_token_hash).not.toBe(row.code_hash);
    expect(h.ctx.codes.verify(tokenOf(consentUrl), row.consent_token_hash as string)).toBe(true);
    expect(h.ctx.codes.verify(intentCode, row.code_hash)).toBe(true);
  });

  it("finds the principal for a code, and nothing for an unknown, malformed or expired-draft code", async () => {
    const h = await holderOn(engine);
    const { intent, intentCode } = await h.intents.publish(basicIntent());
    expect(await h.intents.principalForCode(intentCode)).toEqual({
      kind: "intent-code",
      intentId: intent.id,
    });
    expect(await h.intents.principalForCode(` ${intentCode} `)).toEqual({
      kind: "intent-code",
      intentId: intent.id,
    });
    const unknown = `ic_${"A".repeat(32)}`;
    expect(await h.intents.principalForCode(unknown)).toBeUndefined();
    expect(await h.intents.principalForCode(intentCode.slice(0, -1))).toBeUndefined();
    expect(await h.intents.principalForCode(intentCode.replace("ic_", "xx_"))).toBeUndefined();
    expect(await h.intents.principalForCode("")).toBeUndefined();
    expect(await h.intents.principalForCode(42 as never)).toBeUndefined();

    h.clock.advance(DAY - 1);
    expect(await h.intents.principalForCode(intentCode)).toBeDefined();
    h.clock.advance(1);
    // Expired before expireDue has run...
    expect(await h.intents.principalForCode(intentCode)).toBeUndefined();
    // ...and after it.
    expect(await h.intents.expireDue()).toBe(1);
    expect(await h.intents.principalForCode(intentCode)).toBeUndefined();
  });

  it("a draft is never active by itself: no activation hook, no matches possible, the consent page shows it open", async () => {
    const h = await holderOn(engine);
    const { intent, consentUrl } = await h.intents.publish(basicIntent());
    h.clock.advance(12 * HOUR);
    await h.intents.expireDue();
    const view = await h.consent.consentView(tokenOf(consentUrl));
    expect(view.state).toBe("open");
    const active = await h.ctx.store.db
      .selectFrom("holder_intents")
      .select("id")
      .where("status", "=", "active")
      .execute();
    expect(active).toEqual([]);
    expect(h.calls.filter((c) => c.intentId === intent.id)).toEqual([]);
    // A draft expires without ever having been active: no onEnded either.
    h.clock.advance(12 * HOUR);
    expect(await h.intents.expireDue()).toBe(1);
    expect(h.calls).toEqual([]);
    expect((await h.consent.consentView(tokenOf(consentUrl))).state).toBe("expired");
  });

  it("gives pseudonymous intents a random pseudonym that no result shows", async () => {
    const h = await holderOn(engine);
    const a = await h.intents.publish(basicIntent({ visibility: "pseudonymous" }));
    const b = await h.intents.publish(basicIntent({ visibility: "pseudonymous" }));
    const c = await h.intents.publish(basicIntent());
    const rows = await h.ctx.store.db.selectFrom("holder_intents").select(["id", "pseudonym"]).execute();
    const pseudonym = (id: string) => rows.find((r) => r.id === id)?.pseudonym;
    expect(pseudonym(a.intent.id)).toMatch(/^buyer-[0-9a-z]{10}$/);
    expect(pseudonym(b.intent.id)).toMatch(/^buyer-[0-9a-z]{10}$/);
    expect(pseudonym(a.intent.id)).not.toBe(pseudonym(b.intent.id));
    expect(pseudonym(c.intent.id)).toBeNull();
    expect(a.intent.visibility).toBe("pseudonymous");
    expect(JSON.stringify(a)).not.toContain(pseudonym(a.intent.id) as string);
  });
});
