/**
 * Expiry: drafts end 24 h after publishing (rule 1), unclicked confirmations at their link's end,
 * active intents at validUntil. Reads show the end as soon as it passes; `expireDue` records it,
 * erases the sealed contact, tells matching about intents that had been active, and is idempotent.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activeIntent,
  basicIntent,
  DAY,
  holderOn,
  publishDraft,
  T0,
  tokenOf,
} from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("expires a draft exactly at its 24 h, not a millisecond before", async () => {
    const h = await holderOn(engine);
    const { intent, intentCode } = await publishDraft(h);
    h.clock.set(T0 + DAY - 1);
    expect(await h.intents.expireDue()).toBe(0);
    const principal = await h.intents.principalForCode(intentCode);
    expect((await h.intents.get(principal as never)).status).toBe("awaiting_consent");
    h.clock.set(T0 + DAY);
    // Shown as expired before the job runs...
    expect((await h.intents.get(principal as never)).status).toBe("expired");
    expect(await h.intents.expireDue()).toBe(1);
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "expired", ended_at: T0 + DAY });
    expect(await h.intents.expireDue()).toBe(0);
    expect(h.calls).toEqual([]);
  });

  it("expires an active intent at validUntil, erases the contact and calls onEnded once", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(
      h,
      "a@example.sk",
      basicIntent({ validUntil: new Date(T0 + 10 * DAY).toISOString() }),
    );
    const other = await activeIntent(h, "b@example.sk");
    h.calls.length = 0;
    h.clock.set(T0 + 10 * DAY - 1);
    expect(await h.intents.expireDue()).toBe(0);
    h.clock.set(T0 + 10 * DAY);
    expect((await h.consent.manageView(flow.manageToken)).intent.status).toBe("expired");
    expect(await h.intents.expireDue()).toBe(1);
    expect(await h.intents.expireDue()).toBe(0);
    expect(h.calls).toEqual([{ hook: "onEnded", intentId: flow.intent.id, reason: "expired" }]);
    const rows = await h.ctx.store.db.selectFrom("holder_intents").selectAll().execute();
    expect(rows.find((r) => r.id === flow.intent.id)).toMatchObject({
      status: "expired",
      contact_sealed: null,
      contact_hash: null,
    });
    expect(rows.find((r) => r.id === other.intent.id)).toMatchObject({ status: "active" });
    // The code still reads the expired intent; its manage page still opens.
    const principal = await h.intents.principalForCode(flow.published.intentCode);
    expect((await h.intents.get(principal as never)).status).toBe("expired");
    // An expired intent's digest sends nothing.
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(0);
  });

  it("expires unclicked confirmations at the link's end", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "a@example.sk", accepted: true });
    h.clock.set(T0 + h.ctx.config.confirmTtlMs - 1);
    expect(await h.intents.expireDue()).toBe(0);
    h.clock.set(T0 + h.ctx.config.confirmTtlMs);
    expect(await h.intents.expireDue()).toBe(1);
    expect(h.calls).toEqual([]);
  });

  it("counts every kind in one run and handles more rows than one batch", async () => {
    const h = await holderOn(engine);
    for (let i = 0; i < 510; i++) await publishDraft(h);
    const unconfirmed = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(unconfirmed.consentUrl), { email: "u@example.sk", accepted: true });
    await activeIntent(h, "a@example.sk", basicIntent({ validUntil: new Date(T0 + 3 * DAY).toISOString() }));
    h.clock.set(T0 + 3 * DAY);
    expect(await h.intents.expireDue()).toBe(512);
    const live = await h.ctx.store.db
      .selectFrom("holder_intents")
      .select("id")
      .where("status", "!=", "expired")
      .execute();
    expect(live).toEqual([]);
  });

  it("never touches withdrawn intents", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    await h.consent.withdrawByManageToken(flow.manageToken);
    h.clock.advance(400 * DAY);
    expect(await h.intents.expireDue()).toBe(0);
    expect((await h.consent.manageView(flow.manageToken)).intent.status).toBe("withdrawn");
  });

  it("a failing hook is logged and does not undo the expiry", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(
      h,
      "a@example.sk",
      basicIntent({ validUntil: new Date(T0 + DAY).toISOString() }),
    );
    const { createIntentService } = await import("../../src/intents/index.js");
    const failing = createIntentService(h.ctx, {
      onActivated() {},
      onEnded() {
        throw new Error("matching is down");
      },
    });
    h.clock.set(T0 + DAY);
    expect(await failing.expireDue()).toBe(1);
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", flow.intent.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("expired");
    expect(h.base.logLines.some((line) => line.includes('"event":"intent.hook_failed"'))).toBe(true);
  });
});
