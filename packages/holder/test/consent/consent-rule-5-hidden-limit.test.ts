/**
 * Consent-link rule 5: the holder seals a hidden limit on receipt; the consent page shows only
 * that a limit is set, never its value — nor does any result, mail, log line or clear column.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hiddenLimitAad, openHiddenLimit } from "../../src/intents/index.js";
import {
  activeIntent,
  basicIntent,
  holderOn,
  publishDraft,
  refusal,
  tokenOf,
} from "../support/intents-harness.js";

const LIMIT = 48_731;
const shapes = ["48731", "48,731", "48 731", "48.731"];

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("seals the limit bound to the intent, with its currency", async () => {
    const h = await holderOn(engine);
    const { intent } = await publishDraft(h, basicIntent({ hiddenLimit: LIMIT }));
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(row.hidden_limit_sealed).toMatch(/^v1\./);
    for (const shape of shapes) expect(JSON.stringify(row)).not.toContain(shape);
    expect(openHiddenLimit(h.ctx, intent.id, row.hidden_limit_sealed as string)).toEqual({
      amount: LIMIT,
      currency: "EUR",
    });
    // Copied to another intent, it does not open.
    const other = await publishDraft(h);
    expect(() => openHiddenLimit(h.ctx, other.intent.id, row.hidden_limit_sealed as string)).toThrow();
    expect(() =>
      h.ctx.sealer.openText(row.hidden_limit_sealed as string, hiddenLimitAad(other.intent.id)),
    ).toThrow();
  });

  it("without a budget, the limit is in the country's currency", async () => {
    const h = await holderOn(engine);
    const { intent } = await publishDraft(
      h,
      basicIntent({ budget: undefined, area: { country: "CZ" }, hiddenLimit: 350_000 }),
    );
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(openHiddenLimit(h.ctx, intent.id, row.hidden_limit_sealed as string)).toEqual({
      amount: 350_000,
      currency: "CZK",
    });
  });

  it("the consent page, the confirmation mail and every result show only that a limit is set", async () => {
    const h = await holderOn(engine);
    const published = await publishDraft(h, basicIntent({ hiddenLimit: LIMIT }));
    const view = await h.consent.consentView(tokenOf(published.consentUrl));
    expect(view.state === "open" && view.intent.hasHiddenLimit).toBe(true);
    await h.consent.giveConsent(tokenOf(published.consentUrl), { email: "limit@example.sk", accepted: true });
    const [mail] = await h.mailbox.listMailbox();
    expect(mail?.text).toContain("A private price limit is set");
    expect(mail?.html).toContain("A private price limit is set");

    const outputs: unknown[] = [published, view, mail];
    const flow = await activeIntent(h, "other@example.sk", basicIntent({ hiddenLimit: LIMIT }));
    outputs.push(
      flow,
      await h.intents.get((await h.intents.principalForCode(flow.published.intentCode)) as never),
    );
    outputs.push(await h.consent.manageView(flow.manageToken), await h.mailbox.listMailbox());
    const everything = JSON.stringify(outputs);
    for (const shape of shapes) expect(everything).not.toContain(shape);
    for (const shape of shapes) expect(h.base.logLines.join("\n")).not.toContain(shape);
  });

  it("a refused limit is not echoed in the error", async () => {
    const h = await holderOn(engine);
    const error = await refusal(h.intents.publish(basicIntent({ hiddenLimit: -48_731 })));
    expect(error.code).toBe("ERR_HOLDER_INVALID");
    for (const shape of shapes) expect(error.message).not.toContain(shape);
  });

  it("a signed-in update can replace or remove the limit", async () => {
    const h = await holderOn(engine, { service: { oauthAccess: () => true } });
    const oauth = {
      kind: "oauth",
      subject: "s",
      clientId: "c",
      scopes: ["intents:read", "intents:manage"],
    } as const;
    const { intent } = await publishDraft(h, basicIntent({ hiddenLimit: LIMIT }));
    const shown = await h.intents.update(oauth, intent.id, { hiddenLimit: 51_000 });
    expect(shown.hasHiddenLimit).toBe(true);
    expect(JSON.stringify(shown)).not.toContain("51000");
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", intent.id)
      .executeTakeFirstOrThrow();
    expect(openHiddenLimit(h.ctx, intent.id, row.hidden_limit_sealed as string)).toEqual({
      amount: 51_000,
      currency: "EUR",
    });
    expect((await h.intents.update(oauth, intent.id, { hiddenLimit: null })).hasHiddenLimit).toBe(false);
  });
});
