/**
 * Consent-link rule 4: the intentCode replaces the OAuth identity for get, list_matches and
 * withdraw — the power of an unsubscribe link. It reads the intent (a withdrawn one too), and
 * withdraws it immediately and idempotently; it never gives the contact, the hidden limit (only
 * hasHiddenLimit) or a confirmation token, even after confirmation, and it cannot change the intent.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/model/types.js";
import {
  activeIntent,
  basicIntent,
  DAY,
  holderOn,
  publishDraft,
  refusal,
} from "../support/intents-harness.js";

const codePrincipal = async (h: Awaited<ReturnType<typeof holderOn>>, code: string): Promise<Principal> => {
  const principal = await h.intents.principalForCode(code);
  if (principal === undefined) throw new Error("the code names no intent");
  return principal;
};

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("reads its own intent, with or without the id, and nothing of the secrets", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h, "jana.novakova@example.sk", basicIntent({ hiddenLimit: 17_345 }));
    const principal = await codePrincipal(h, flow.published.intentCode);
    const intent = await h.intents.get(principal);
    expect(await h.intents.get(principal, flow.intent.id)).toEqual(intent);
    expect(intent).toMatchObject({ id: flow.intent.id, status: "active", hasHiddenLimit: true });
    expect(Object.keys(intent).sort()).toEqual(
      [
        "area",
        "budget",
        "createdAt",
        "criteria",
        "hasHiddenLimit",
        "id",
        "statement",
        "status",
        "validUntil",
        "visibility",
      ].sort(),
    );
    const shown = JSON.stringify(intent);
    for (const secret of [
      "jana.novakova",
      "17345",
      "17,345",
      flow.confirmToken,
      flow.manageToken,
      flow.consentToken,
    ]) {
      expect(shown).not.toContain(secret);
    }
  });

  it("refuses another intent's id", async () => {
    const h = await holderOn(engine);
    const mine = await publishDraft(h);
    const theirs = await publishDraft(h);
    const principal = await codePrincipal(h, mine.intentCode);
    for (const call of [
      h.intents.get(principal, theirs.intent.id),
      h.intents.withdraw(principal, theirs.intent.id),
    ]) {
      const error = await refusal(call);
      expect(error.code).toBe("ERR_HOLDER_FORBIDDEN");
      expect(error.message).toBe("an intentCode gives access to its own intent only");
    }
    expect((await h.intents.get(await codePrincipal(h, theirs.intentCode))).status).toBe("awaiting_consent");
  });

  it("cannot change the intent", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    const principal = await codePrincipal(h, flow.published.intentCode);
    const error = await refusal(h.intents.update(principal, flow.intent.id, { statement: "something else" }));
    expect(error.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(error.message).toContain("consent-link rule 4");
    expect((await h.intents.get(principal)).statement).toBe(flow.intent.statement);
  });

  it("withdraws at once and idempotently; the intent stays readable; matching hears it once", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    const principal = await codePrincipal(h, flow.published.intentCode);
    expect(await h.intents.withdraw(principal)).toEqual({ status: "withdrawn" });
    // Immediately: the very next read, with no job in between.
    expect((await h.intents.get(principal)).status).toBe("withdrawn");
    expect(await h.intents.withdraw(principal)).toEqual({ status: "withdrawn" });
    expect(await h.intents.withdraw(principal, flow.intent.id)).toEqual({ status: "withdrawn" });
    expect(h.calls).toEqual([
      { hook: "onActivated", intentId: flow.intent.id },
      { hook: "onEnded", intentId: flow.intent.id, reason: "withdrawn" },
    ]);
    // The code still names the intent after the end (so the agent can learn it was withdrawn).
    expect(await h.intents.principalForCode(flow.published.intentCode)).toEqual(principal);
    const row = await h.ctx.store.db
      .selectFrom("holder_intents")
      .selectAll()
      .where("id", "=", flow.intent.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: "withdrawn",
      ended_at: h.clock.now(),
      contact_sealed: null,
      contact_hash: null,
    });
  });

  it("tells the person by e-mail, with the manage link, when the agent withdraws a confirmed intent", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(h);
    await h.intents.withdraw(await codePrincipal(h, flow.published.intentCode));
    const [notice, confirmation] = await h.mailbox.listMailbox({ to: flow.email });
    expect(confirmation?.subject).toContain("Confirm");
    expect(notice?.subject).toBe("Your intent was withdrawn");
    expect(notice?.text).toContain(`/manage/${flow.manageToken}`);
    expect(notice?.html).toContain(`/manage/${flow.manageToken}`);
  });

  it("withdraws a draft or an unconfirmed intent without mailing the unverified address", async () => {
    const h = await holderOn(engine);
    const draft = await publishDraft(h);
    expect(await h.intents.withdraw(await codePrincipal(h, draft.intentCode))).toEqual({
      status: "withdrawn",
    });
    const unconfirmed = await publishDraft(h);
    await h.consent.giveConsent(unconfirmed.consentUrl.split("/").pop() as string, {
      email: "who@example.sk",
      accepted: true,
    });
    expect(await h.intents.withdraw(await codePrincipal(h, unconfirmed.intentCode))).toEqual({
      status: "withdrawn",
    });
    expect((await h.mailbox.listMailbox()).map((m) => m.subject)).toEqual([
      "Confirm your intent at Doorbell intent holder",
    ]);
    expect(h.calls).toEqual([]);
  });

  it("refuses to withdraw an intent that already expired", async () => {
    const h = await holderOn(engine);
    const flow = await activeIntent(
      h,
      "a@example.sk",
      basicIntent({ validUntil: new Date(h.clock.now() + 3 * DAY).toISOString() }),
    );
    h.clock.advance(3 * DAY);
    const principal = await codePrincipal(h, flow.published.intentCode);
    const error = await refusal(h.intents.withdraw(principal));
    expect(error.code).toBe("ERR_HOLDER_GONE");
    expect((await h.intents.get(principal)).status).toBe("expired");
  });

  it("an unknown principal kind or a missing principal is refused", async () => {
    const h = await holderOn(engine);
    const draft = await publishDraft(h);
    expect((await refusal(h.intents.get({ kind: "api-key" } as never, draft.intent.id))).code).toBe(
      "ERR_HOLDER_FORBIDDEN",
    );
    expect((await refusal(h.intents.get(undefined as never, draft.intent.id))).code).toBe(
      "ERR_HOLDER_FORBIDDEN",
    );
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  const oauth: Principal = { kind: "oauth", subject: "person-1", clientId: "assistant" };
  /** The same person with a token that allows reading and managing (issue #8's scopes). */
  const signedIn: Principal = { ...oauth, scopes: ["intents:read", "intents:manage"] };

  it("refuses OAuth principals until sign-in exists", async () => {
    const h = await holderOn(engine);
    const draft = await publishDraft(h);
    for (const call of [
      h.intents.get(oauth, draft.intent.id),
      h.intents.update(oauth, draft.intent.id, { statement: "x" }),
      h.intents.withdraw(oauth, draft.intent.id),
    ]) {
      const error = await refusal(call);
      expect(error.code).toBe("ERR_HOLDER_FORBIDDEN");
      expect(error.message).toContain("not available on this holder yet");
    }
  });

  it("with OAuth access, updates fields but never renews validUntil", async () => {
    const h = await holderOn(engine, {
      service: { oauthAccess: (p, id) => p.subject === "person-1" && id.startsWith("int_") },
    });
    const flow = await activeIntent(h, "a@example.sk", basicIntent({ hiddenLimit: 16_000 }));
    const id = flow.intent.id;
    h.calls.length = 0;

    const updated = await h.intents.update(signedIn, id, {
      statement: "A Škoda Superb instead",
      criteria: { category: "vehicles", make: "Škoda", model: "Superb" },
      budget: { amount: 18_000, currency: "EUR" },
      buyBy: "2027-01-31",
    });
    expect(updated).toMatchObject({
      statement: "A Škoda Superb instead",
      criteria: { category: "vehicles", make: "Škoda", model: "Superb" },
      budget: { amount: 18_000, currency: "EUR" },
      buyBy: "2027-01-31T23:59:59.999Z",
      hasHiddenLimit: true,
      validUntil: flow.intent.validUntil,
    });
    expect(h.calls).toEqual([{ hook: "onChanged", intentId: id }]);

    const renew = await refusal(h.intents.update(signedIn, id, { validUntil: "2027-06-01" } as never));
    expect(renew.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(renew.message).toContain("renewing validUntil needs the person's own fresh action");

    const currency = await refusal(
      h.intents.update(signedIn, id, { budget: { amount: 400_000, currency: "CZK" } }),
    );
    expect(currency.message).toContain("needs a new hiddenLimit in that currency");
    expect(
      (
        await h.intents.update(signedIn, id, {
          budget: { amount: 400_000, currency: "CZK" },
          hiddenLimit: 420_000,
        })
      ).budget,
    ).toEqual({
      amount: 400_000,
      currency: "CZK",
    });
    expect((await h.intents.update(signedIn, id, { hiddenLimit: null, buyBy: null })).hasHiddenLimit).toBe(
      false,
    );
    expect((await h.intents.get(signedIn, id)).buyBy).toBeUndefined();

    expect((await refusal(h.intents.update(signedIn, id, {}))).message).toBe("no changes were given");
    expect((await refusal(h.intents.update(signedIn, id, { colour: "red" } as never))).message).toContain(
      'changes has no field "colour"',
    );
    expect((await refusal(h.intents.update(signedIn, id, { statement: "" }))).code).toBe(
      "ERR_HOLDER_INVALID",
    );
    // A token without the scope is refused before anything is read or changed.
    const unscoped = await refusal(h.intents.update(oauth, id, { statement: "x" }));
    expect(unscoped.code).toBe("ERR_HOLDER_FORBIDDEN");
    expect(unscoped.message).toContain("intents:manage");
    expect((await refusal(h.intents.get({ ...signedIn, subject: "someone-else" }, id))).code).toBe(
      "ERR_HOLDER_NOT_FOUND",
    );
    expect((await refusal(h.intents.get(oauth))).message).toBe("id is required when signed in");

    await h.intents.withdraw(signedIn, id);
    expect((await refusal(h.intents.update(signedIn, id, { statement: "again" }))).code).toBe(
      "ERR_HOLDER_GONE",
    );
  });
});
