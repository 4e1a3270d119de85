/**
 * Issue 16 item 12: "renewing validUntil requires the buyer's fresh action", offered on the manage
 * page and to the signed-in person. A whole holder on loopback (built-in OAuth server, both
 * engines), tokens from the real sign-in flow (oauth-harness.ts):
 *
 *  - intent_update_intent with validUntil alone, from an assistant the person signed in to, changes
 *    nothing: the person gets a mail with their manage page, the date filled in, and the answer
 *    says so under extensions.renewal;
 *  - the person presses Renew there (the fresh action) and validUntil is the end of that day;
 *  - the same bounds as the page (future, at most the longest validity, active only); an
 *    intentCode and another assistant of the person (here one of intents:read) cannot offer it; it goes
 *    alone; a few offers per intent per hour.
 */
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLocalMailbox, type MailboxEntry } from "../../src/mail/local-mailbox.js";
import {
  closeHolders,
  connectWith,
  EMAIL,
  FormBrowser,
  field,
  type HolderOnLoopback,
  holderOn,
  signedInClient,
  tool,
} from "../support/oauth-harness.js";

const PUBLISH = {
  statement: "A Škoda Octavia combi, diesel, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
};
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface IntentAnswer {
  id: string;
  status: string;
  validUntil: string;
  extensions?: { renewal?: { validUntil: string; status: string } };
}

async function refused(client: Client, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name: "intent_update_intent", arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  return JSON.stringify(result.content);
}

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  const clients: Client[] = [];
  const connect = async (token?: string) => {
    const client = await connectWith(h.origin, token);
    clients.push(client);
    return client;
  };
  const offers = async (): Promise<MailboxEntry[]> => {
    const mailer = h.holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("no local mailbox");
    return (await mailer.listMailbox({ to: EMAIL })).filter((mail) =>
      mail.subject.startsWith("Keep your request"),
    );
  };

  beforeAll(async () => {
    h = await holderOn(engine.url);
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await closeHolders(h);
  });

  it("offers the renewal to the person by mail; the person renews it on the manage page", async () => {
    const signed = await signedInClient(h);
    const assistant = await connect(signed.tokens.access_token);
    const { intent } = await tool<{ intent: IntentAnswer }>(assistant, "intent_publish_intent", PUBLISH);
    expect(intent.status).toBe("active");
    const target = day(Date.now() + 100 * DAY);

    const answer = await tool<IntentAnswer>(assistant, "intent_update_intent", {
      id: intent.id,
      validUntil: target,
    });
    expect(answer.validUntil).toBe(intent.validUntil); // nothing changed yet
    expect(answer.extensions?.renewal).toEqual({
      validUntil: `${target}T23:59:59.999Z`,
      status: "offered-to-person",
    });
    expect((await tool<IntentAnswer>(assistant, "intent_get_intent", { id: intent.id })).validUntil).toBe(
      intent.validUntil,
    );

    const [mail] = await offers();
    expect(mail?.subject).toContain(target);
    expect(mail?.text).toContain("Octavia");
    const link = new RegExp(`(${h.origin}/manage/[0-9A-Za-z]+)\\?renew=${target}#renew`).exec(
      mail?.text ?? "",
    );
    expect(link, mail?.text).not.toBeNull();

    // The person opens the link: the form starts at the offered date; pressing Renew is theirs.
    const person = new FormBrowser(h.origin);
    const manage = new URL(link?.[1] as string).pathname;
    const page = await person.go(`${manage}?renew=${target}`);
    const html = await page.response.text();
    expect(html).toContain(`value="${target}"`);
    const renewed = await person.go(`${manage}/renew`, { csrf: field(html, "csrf"), validUntil: target });
    expect(renewed.response.status).toBe(200);
    expect((await tool<IntentAnswer>(assistant, "intent_get_intent", { id: intent.id })).validUntil).toBe(
      `${target}T23:59:59.999Z`,
    );
  });

  it("holds the page's bounds, goes alone, and only for the assistant with intents:manage that published it", async () => {
    const signed = await signedInClient(h);
    const assistant = await connect(signed.tokens.access_token);
    const { intent, intentCode } = await tool<{ intent: IntentAnswer; intentCode: string }>(
      assistant,
      "intent_publish_intent",
      PUBLISH,
    );
    const before = (await offers()).length;
    expect(await refused(assistant, { id: intent.id, validUntil: day(Date.now() + 400 * DAY) })).toContain(
      "validUntil can be at most 365 days",
    );
    expect(await refused(assistant, { id: intent.id, validUntil: "2020-01-01" })).toContain("in the future");
    expect(
      await refused(assistant, { id: intent.id, validUntil: day(Date.now() + 60 * DAY), statement: "Other" }),
    ).toContain("validUntil goes alone");

    // An intentCode cannot change an intent (consent-link rule 4): the sign-in challenge answers.
    const anonymous = await connect();
    await expect(
      anonymous.callTool({
        name: "intent_update_intent",
        arguments: { id: intent.id, intentCode, validUntil: day(Date.now() + 60 * DAY) },
      }),
    ).rejects.toThrow(/needs the person signed in/);
    const readOnly = await signedInClient(h, { browser: signed.browser, scope: "intents:read" });
    const reader = await connect(readOnly.tokens.access_token);
    await expect(
      reader.callTool({
        name: "intent_update_intent",
        arguments: { id: intent.id, validUntil: day(Date.now() + 60 * DAY) },
      }),
    ).rejects.toThrow(/needs the intents:manage scope/);
    expect((await offers()).length).toBe(before); // no refusal mailed anyone

    await tool(assistant, "intent_withdraw_intent", { id: intent.id });
    expect(await refused(assistant, { id: intent.id, validUntil: day(Date.now() + 60 * DAY) })).toContain(
      "only an active request can be renewed",
    );
  });

  it("mails at most three offers per intent per hour", async () => {
    const signed = await signedInClient(h);
    const assistant = await connect(signed.tokens.access_token);
    const { intent } = await tool<{ intent: IntentAnswer }>(assistant, "intent_publish_intent", PUBLISH);
    const before = (await offers()).length;
    for (let i = 1; i <= 3; i++) {
      await tool(assistant, "intent_update_intent", {
        id: intent.id,
        validUntil: day(Date.now() + (30 + i) * DAY),
      });
    }
    const refusal = await refused(assistant, { id: intent.id, validUntil: day(Date.now() + 40 * DAY) });
    expect(refusal).toContain("ERR_HOLDER_RATE_LIMITED");
    // It names the limit and how the operator changes it.
    expect(refusal).toContain("The limit mail.interaction (3 per 3600 s) was reached");
    expect(refusal).toContain("--limit mail.interaction=N/SECONDS");
    expect((await offers()).length).toBe(before + 3);
  });
});
