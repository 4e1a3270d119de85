/**
 * Consent-link rule 6: delivery to the verified channel continues independently of the agent's
 * pulls. The digest mails the matches not mailed yet (title, price, location, link — never the
 * hidden limit), with the manage link, moves the intent's digest watermark past them, and never
 * mails a match twice.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsentService, DIGEST_WINDOW_MS } from "../../src/consent/index.js";
import type { Mailer } from "../../src/mail/mailer.js";
import {
  activeIntent,
  basicIntent,
  holderOn,
  publishDraft,
  recordMatch,
  T0,
  tokenOf,
} from "../support/intents-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("mails the unmailed matches once, newest first, with the manage link", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(
      h,
      "a@example.sk",
      basicIntent({
        area: { country: "SK" },
        budget: { amount: 20_000, currency: "EUR" },
        hiddenLimit: 16_789,
      }),
    );
    await recordMatch(h, flow.intent.id, {
      id: "o1",
      title: "Octavia <Style>",
      price: 12_500,
      at: T0 + 1000,
    });
    await recordMatch(h, flow.intent.id, {
      id: "o2",
      title: "Octavia Scout",
      price: 16_000,
      at: T0 + 2000,
      region: "SK-KI",
    });
    h.clock.advance(10_000);
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(2);
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(0);

    const [digest] = await h.mailbox.listMailbox({ to: "a@example.sk", limit: 1 });
    expect(digest?.subject).toBe("2 new offers for your intent");
    const text = digest?.text ?? "";
    expect(text.indexOf("Octavia Scout")).toBeLessThan(text.indexOf("Octavia <Style>"));
    expect(text).toContain("12,500 EUR");
    expect(text).toContain("Košice region, Slovakia");
    expect(text).toContain("https://catalogue.example.sk/o2");
    expect(text).toContain(`/manage/${flow.manageToken}`);
    expect(digest?.html).toContain("Octavia &lt;Style&gt;");
    expect(digest?.html).toContain(`/manage/${flow.manageToken}`);
    for (const shape of ["16789", "16,789"]) expect(JSON.stringify(digest)).not.toContain(shape);

    const mailed = await h.ctx.store.db
      .selectFrom("holder_intents")
      .select(["mailed_at"])
      .where("id", "=", flow.intent.id)
      .executeTakeFirstOrThrow();
    expect(Number(mailed.mailed_at)).toBe(T0 + 2000); // the newest match mailed

    // A later match within the digest window waits for its end (issue 14), then goes alone.
    await recordMatch(h, flow.intent.id, { id: "o3", title: "Octavia RS", price: 15_000, at: T0 + 20_000 });
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(0);
    h.clock.advance(DIGEST_WINDOW_MS);
    expect(await h.consent.sendDueDigests()).toBe(1);
    const [next] = await h.mailbox.listMailbox({ to: "a@example.sk", limit: 1 });
    expect(next?.subject).toBe("A new offer for your intent");
    expect(next?.text).toContain("Octavia RS");
    expect(next?.text).not.toContain("Octavia Scout");
  });

  it("lists at most 20 offers and counts the rest", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    for (let i = 0; i < 23; i++) {
      await recordMatch(h, flow.intent.id, {
        id: `m${i}`,
        title: `Offer number ${i}`,
        price: 10_000 + i,
        at: T0 + i,
      });
    }
    expect(await h.consent.sendMatchDigest(flow.intent.id)).toBe(23);
    const [digest] = await h.mailbox.listMailbox({ limit: 1 });
    expect(digest?.subject).toBe("23 new offers for your intent");
    expect(digest?.text).toContain("Offer number 22");
    expect(digest?.text).not.toContain("Offer number 2\n");
    expect(digest?.text).toContain("and 3 more on your manage page");
  });

  it("sends nothing for drafts, unconfirmed or withdrawn intents, or unknown ids", async () => {
    const h = await holderOn(engine);
    const draft = await publishDraft(h);
    const unconfirmed = await publishDraft(h);
    await h.consent.giveConsent(tokenOf(unconfirmed.consentUrl), { email: "u@example.sk", accepted: true });
    const withdrawn = await activeIntent(h, "w@example.sk");
    await h.consent.withdrawByManageToken(withdrawn.manageToken);
    let n = 0;
    for (const id of [draft.intent.id, unconfirmed.intent.id, withdrawn.intent.id]) {
      await recordMatch(h, id, { id: `x${n++}`, title: "Anything", price: 1, at: T0 });
    }
    const before = (await h.mailbox.listMailbox()).length;
    for (const id of [draft.intent.id, unconfirmed.intent.id, withdrawn.intent.id, "int_nope"]) {
      expect(await h.consent.sendMatchDigest(id)).toBe(0);
    }
    expect((await h.mailbox.listMailbox()).length).toBe(before);
  });

  it("a failed send leaves the matches for the next digest, tried when the window of the failed one ends", async () => {
    let fail = true;
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    const flaky: Mailer = {
      kind: "smtp",
      send: async (m) => {
        if (fail) throw new Error("connection refused");
        await h.mailbox.send(m);
      },
    };
    const consent = createConsentService({ ...h.ctx, mailer: flaky });
    await recordMatch(h, flow.intent.id, { id: "f1", title: "Octavia", price: 12_000, at: T0 });
    expect(await consent.sendMatchDigest(flow.intent.id)).toBe(0);
    const rows = await h.ctx.store.db
      .selectFrom("holder_intents")
      .select("mailed_at")
      .where("id", "=", flow.intent.id)
      .execute();
    expect(rows).toEqual([{ mailed_at: null }]); // the watermark went back
    fail = false;
    expect(await consent.sendMatchDigest(flow.intent.id)).toBe(0); // not again within the window
    h.clock.advance(DIGEST_WINDOW_MS);
    expect(await consent.sendMatchDigest(flow.intent.id)).toBe(1);
  });

  it("concurrent digests never mail a match twice", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    for (let i = 0; i < 5; i++)
      await recordMatch(h, flow.intent.id, { id: `c${i}`, title: `Car ${i}`, price: 9_000, at: T0 + i });
    // PostgreSQL: a second pool, as a second holder process would have. SQLite: one process owns
    // the file (a second handle in the same thread would block it), so the race is on one handle.
    let second = h.consent;
    if (engine.dialect === "postgres") {
      const { createTestHolderContext } = await import("../../src/testing.js");
      const ctx2 = await createTestHolderContext(await engine.connect(), h.clock.now);
      second = createConsentService({ ...ctx2, mailer: h.mailbox });
    }
    const counts = await Promise.all([
      h.consent.sendMatchDigest(flow.intent.id),
      second.sendMatchDigest(flow.intent.id),
      h.consent.sendMatchDigest(flow.intent.id),
      second.sendMatchDigest(flow.intent.id),
    ]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(5);
    const digests = (await h.mailbox.listMailbox()).filter((m) => m.subject.includes("new offer"));
    const mentioned = digests.flatMap((m) => m.text.match(/Car \d/g) ?? []);
    expect(mentioned.sort()).toEqual(["Car 0", "Car 1", "Car 2", "Car 3", "Car 4"]);
  });
});
