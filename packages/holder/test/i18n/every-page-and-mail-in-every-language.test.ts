/**
 * Every page and mail of the sign-in in every language the holder advertises, on a whole holder on
 * loopback (built-in OAuth server, both engines), driven over HTTP by a browser that sends
 * `Accept-Language: en`, `sk` or `cs`: the provider's error page, the sign-in pages and their
 * refusals, the mail-limit page, the approval page, the sign-in mail, and the mails about what the
 * assistant then publishes (the notice and the renewal offer, in the language of the consent text
 * the person agreed to), and the page of the one-click link those mails carry; the public
 * agreement checker (its form, refusals and verdicts, with key pages given as supplied); and the
 * holder's plain-text answers (its index, an unknown address, a failure). Each page and mail in
 * Slovak and Czech must say its own words: a text
 * that is the English rendering's text word for word fails (untranslated.ts). The catalogues
 * themselves have one shape (Messages, MailWords); here no Slovak or Czech entry is the English one.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentTextFor } from "../../src/i18n/consent-texts.js";
import { isLocalMailbox, type MailboxEntry } from "../../src/mail/local-mailbox.js";
import type { Lang } from "../../src/model/languages.js";
import {
  authorizationUrl,
  closeHolders,
  connectWith,
  FormBrowser,
  field,
  type HolderOnLoopback,
  holderOn,
  pkce,
  redirectServer,
  registerClient,
  SCOPE,
  tokenRequest,
  tool,
} from "../support/oauth-harness.js";
import { mailLines, textNodes, untranslated } from "../support/untranslated.js";

const HOLDER = "Doorbell demo holder";
const CLIENT = "Test assistant";
const PUBLISH = {
  statement: "A Škoda Octavia combi, diesel, near Bratislava",
  criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
  area: { country: "SK", region: "SK-BL" },
  budget: { amount: 15_000, currency: "EUR" },
};
const DAY = 86_400_000;

// The agreement vectors of the sibling package: a record that checks out and its signers' key pages.
const vectors = path.join(import.meta.dirname, "..", "..", "..", "agreements", "vectors");
const vector = (file: string) => readFileSync(path.join(vectors, file), "utf8");
const RECORD = vector("records/two-signatures-quote.json");
const KEY_PAGES = ["key-pages/seller.json", "key-pages/buyer.json"].map(vector).join("\n");
const CHANGED_RECORD = JSON.stringify({
  ...(JSON.parse(RECORD) as { terms: Record<string, unknown> }),
  terms: { ...(JSON.parse(RECORD) as { terms: Record<string, unknown> }).terms, note: "changed afterwards" },
});

interface Rendered {
  status: number;
  html: string;
}

interface Mail {
  subject: string;
  text: string;
}

/** A plain-text answer: its status, its Content-Language, its lines. */
interface Plain {
  status: number;
  language: string | null;
  lines: string[];
}

/** What one person, in one language, is shown and sent. */
interface Seen {
  pages: Map<string, Rendered>;
  mails: Map<string, Mail>;
  plain: Map<string, Plain>;
}

const plainOf = async (response: Response): Promise<Plain> => ({
  status: response.status,
  language: response.headers.get("content-language"),
  lines: mailLines(await response.text()),
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let h: HolderOnLoopback;
  let callback: Awaited<ReturnType<typeof redirectServer>>;
  let clientId: string;
  const clients: Client[] = [];
  const seen = new Map<Lang, Seen>();

  const mailsTo = async (email: string): Promise<MailboxEntry[]> => {
    const mailer = h.holder.context.mailer;
    if (!isLocalMailbox(mailer)) throw new Error("no local mailbox");
    return mailer.listMailbox({ to: email });
  };

  /** The person in `lang`: every page of the sign-in, its refusals, and the mails that follow. */
  async function walk(lang: Lang): Promise<Seen> {
    const pages = new Map<string, Rendered>();
    const mails = new Map<string, Mail>();
    const plain = new Map<string, Plain>();
    const email = `person.${lang}@example.sk`;
    const browser = new FormBrowser(h.origin, { "accept-language": lang });
    const keep = async (name: string, answer: { response: Response }) => {
      const html = await answer.response.text();
      pages.set(name, { status: answer.response.status, html });
      return html;
    };
    const newestMail = async (subject?: (mail: MailboxEntry) => boolean): Promise<MailboxEntry> => {
      const found = (await mailsTo(email)).find((mail) => subject?.(mail) ?? true);
      if (found === undefined) throw new Error(`no mail to ${email}`);
      return found;
    };

    await keep(
      "error page",
      await browser.go(
        `/oauth/auth?client_id=unknown-client&response_type=code&redirect_uri=${encodeURIComponent(callback.url)}`,
      ),
    );
    await keep("unknown sign-in", await browser.go("/signin/x"));
    await keep("ended sign-in", await browser.go("/signin/AAAAAAAAAAAAAAAA"));

    // A sign-in whose mails run out: three are sent, the fourth is refused with the limit's name.
    const spent = await browser.go(authorizationUrl(h.origin, { ...request(), challenge: pkce().challenge }));
    const spentUid = new URL(spent.url).pathname.split("/")[2] as string;
    const spentCsrf = field(await spent.response.text(), "csrf");
    for (let i = 0; i < 3; i++) await browser.go(`/signin/${spentUid}/email`, { csrf: spentCsrf, email });
    await keep("mail limit", await browser.go(`/signin/${spentUid}/email`, { csrf: spentCsrf, email }));

    const { verifier, challenge } = pkce();
    const opened = await browser.go(authorizationUrl(h.origin, { ...request(), challenge }));
    const signInHtml = await keep("sign-in", opened);
    const uid = new URL(opened.url).pathname.split("/")[2] as string;
    const csrf = field(signInHtml, "csrf");
    await keep("refused form", await browser.go(`/signin/${uid}/email`, { csrf: "forged", email }));
    await keep(
      "invalid address",
      await browser.go(`/signin/${uid}/email`, { csrf, email: "not an address" }),
    );
    await keep("approve before signing in", await browser.go(`/signin/${uid}/approve`, { csrf }));
    await keep("sign-in mail sent", await browser.go(`/signin/${uid}/email`, { csrf, email }));

    const signInMail = await newestMail((mail) => mail.text.includes(`/signin/${uid}/link/`));
    mails.set("sign-in", signInMail);
    const link = /https?:\/\/\S+\/signin\/\S+\/link\/[A-Za-z0-9_-]+/.exec(signInMail.text)?.[0] as string;
    const linkHtml = await keep("sign-in link", await browser.go(link));
    await keep("unknown link", await browser.go(`/signin/${uid}/link/!`));
    const forged = `${link.slice(0, -1)}${link.endsWith("A") ? "B" : "A"}`;
    await keep("used or forged link", await browser.go(forged, { csrf: field(linkHtml, "csrf") }));

    const approval = await browser.go(link, { csrf: field(linkHtml, "csrf") });
    const approvalHtml = await keep("approval", approval);
    const approveCsrf = field(approvalHtml, "csrf");
    // Consent is an interaction of its own, with its own uid.
    const approveUid = new URL(approval.url).pathname.split("/")[2] as string;
    await keep(
      "consent text changed",
      await browser.go(`/signin/${approveUid}/approve`, { csrf: approveCsrf, consentVersion: "2020-01-01" }),
    );
    const allowed = await browser.go(`/signin/${approveUid}/approve`, {
      csrf: approveCsrf,
      consentVersion: field(approvalHtml, "consentVersion"),
    });
    const code = new URL(allowed.url).searchParams.get("code");
    expect(code, `${allowed.response.status} ${(await allowed.response.text()).slice(-600)}`).toBeTruthy();
    const exchanged = await tokenRequest(h.origin, {
      grant_type: "authorization_code",
      client_id: clientId,
      code: code as string,
      redirect_uri: callback.url,
      code_verifier: verifier,
      resource: `${h.origin}/mcp`,
    });
    expect(exchanged.status).toBe(200);
    const { access_token } = (await exchanged.json()) as { access_token: string };

    // What the assistant publishes for the person is mailed in the language they agreed in.
    const assistant = await connectWith(h.origin, access_token);
    clients.push(assistant);
    const { intent } = await tool<{ intent: { id: string } }>(assistant, "intent_publish_intent", PUBLISH);
    mails.set("published", await newestMail());
    const target = new Date(Date.now() + 60 * DAY).toISOString().slice(0, 10);
    await tool(assistant, "intent_update_intent", { id: intent.id, validUntil: target });
    mails.set("renewal offer", await newestMail());

    // The one-click link every mail about the intent carries (List-Unsubscribe).
    const manage = /https?:\/\/\S+\/manage\/[A-Za-z0-9_-]+/.exec(mails.get("published")?.text ?? "")?.[0];
    expect(manage).toBeDefined();
    await keep("unknown one-click link", await browser.go("/manage/!/unsubscribe"));
    await keep("stop notifications", await browser.go(`${manage}/unsubscribe`));
    await keep("not a one-click request", await browser.go(`${manage}/unsubscribe`, {}));
    await keep(
      "notifications stopped",
      await browser.go(`${manage}/unsubscribe`, { "List-Unsubscribe": "One-Click" }),
    );

    // The public agreement checker: this holder trusts no key page host, so a record checks out
    // only against key pages given with it ("keys as supplied").
    await keep("check form", await browser.go("/check"));
    await keep("check without a record", await browser.go("/check", { record: "" }));
    await keep("check without key pages", await browser.go("/check", { record: RECORD }));
    await keep(
      "check with key pages given",
      await browser.go("/check", { record: RECORD, keypages: KEY_PAGES }),
    );
    await keep(
      "check of a changed record",
      await browser.go("/check", { record: CHANGED_RECORD, keypages: KEY_PAGES }),
    );
    await keep("check not sent as a form", {
      response: await fetch(`${h.origin}/check`, { method: "PUT", headers: { "accept-language": lang } }),
    });

    const asked = (at: string) => fetch(`${h.origin}${at}`, { headers: { "accept-language": lang } });
    plain.set("index", await plainOf(await asked("/")));
    plain.set("not found", await plainOf(await asked("/no/such/page")));
    return { pages, mails, plain };
  }

  const request = () => ({ clientId, redirectUri: callback.url, scope: SCOPE });
  const english = () => seen.get("en") as Seen;

  beforeAll(async () => {
    h = await holderOn(engine.url);
    callback = await redirectServer();
    clientId = await registerClient(h.origin, callback.url);
    for (const lang of ["en", "sk", "cs"] as const) seen.set(lang, await walk(lang));
  }, 180_000);
  afterAll(async () => {
    for (const client of clients) await client.close();
    await callback?.close();
    await closeHolders(h);
  });

  it("the English walk reaches every page it means to (the refusals with their statuses)", () => {
    const statuses = Object.fromEntries([...english().pages].map(([name, page]) => [name, page.status]));
    expect(statuses).toEqual({
      "error page": 400,
      "unknown sign-in": 404,
      "ended sign-in": 410,
      "mail limit": 429,
      "sign-in": 200,
      "refused form": 403,
      "invalid address": 400,
      "approve before signing in": 409,
      "sign-in mail sent": 200,
      "sign-in link": 200,
      "unknown link": 404,
      "used or forged link": 410,
      approval: 200,
      "consent text changed": 409,
      "unknown one-click link": 404,
      "stop notifications": 200,
      "not a one-click request": 400,
      "notifications stopped": 200,
      "check form": 200,
      "check without a record": 400,
      "check without key pages": 400,
      "check with key pages given": 200,
      "check of a changed record": 200,
      "check not sent as a form": 405,
    });
    // The checker's verdicts, the new "keys as supplied" one with its own line.
    const checked = english().pages.get("check with key pages given")?.html;
    expect(checked).toContain("<h1>Checks out, two signatures (keys as supplied)</h1>");
    expect(checked).toContain("no trusted host vouched for them");
    expect(english().pages.get("check of a changed record")?.html).toContain("<h1>Does not check out</h1>");
    expect([...english().mails.keys()]).toEqual(["sign-in", "published", "renewal offer"]);
  });

  it.each(["sk", "cs"] as const)("%s: every page is in its language, with no English text left", (lang) => {
    const passThrough = [HOLDER, CLIENT, new URL(h.origin).host];
    for (const [name, page] of (seen.get(lang) as Seen).pages) {
      const reference = english().pages.get(name) as Rendered;
      expect(page.status, name).toBe(reference.status);
      expect(page.html, name).toContain(`<html lang="${lang}"`);
      const left = untranslated(textNodes(reference.html), textNodes(page.html), passThrough);
      expect(left, `${name} (${lang})`).toEqual([]);
    }
  });

  it.each(["sk", "cs"] as const)("%s: every plain-text answer is in its language", (lang) => {
    const passThrough = [HOLDER, new URL(h.origin).host];
    for (const [name, answer] of (seen.get(lang) as Seen).plain) {
      const reference = english().plain.get(name) as Plain;
      expect([name, answer.status, answer.language]).toEqual([name, reference.status, lang]);
      expect(untranslated(reference.lines, answer.lines, passThrough), `${name} (${lang})`).toEqual([]);
    }
  });

  it("a failure's plain answer is in the request's language", async () => {
    // A second holder whose database has gone away: its end request route fails on the first read.
    const broken = await holderOn((await engine.createDatabase()).url);
    try {
      await broken.holder.context.store.close();
      const failures = new Map<Lang, Plain>();
      for (const lang of ["en", "sk", "cs"] as const) {
        const response = await fetch(`${broken.origin}/push/end`, {
          method: "POST",
          headers: { "accept-language": lang, "content-type": "application/json" },
          body: JSON.stringify({ type: "subscription.end", subscriptionId: "sub_x", reason: "gone" }),
        });
        failures.set(lang, await plainOf(response));
      }
      const english = failures.get("en") as Plain;
      expect(english).toEqual({
        status: 500,
        language: "en",
        lines: ["Something went wrong on our side. Try again later."],
      });
      for (const lang of ["sk", "cs"] as const) {
        const answer = failures.get(lang) as Plain;
        expect([answer.status, answer.language]).toEqual([500, lang]);
        expect(untranslated(english.lines, answer.lines, [])).toEqual([]);
      }
    } finally {
      await closeHolders(broken);
    }
  });

  it.each(["sk", "cs"] as const)("%s: every mail is in its language, with no English line left", (lang) => {
    const passThrough = [HOLDER, CLIENT, new URL(h.origin).host];
    for (const [name, mail] of (seen.get(lang) as Seen).mails) {
      const reference = english().mails.get(name) as Mail;
      const left = untranslated(
        [reference.subject, ...mailLines(reference.text)],
        [mail.subject, ...mailLines(mail.text)],
        passThrough,
      );
      expect(left, `${name} (${lang})`).toEqual([]);
    }
  });

  it("the intents published for a person record the consent text they agreed to, in its language", async () => {
    const rows = await h.holder.context.store.db
      .selectFrom("holder_intents")
      .select("consent_version")
      .where("status", "=", "active")
      .execute();
    const versions = rows.map((row) => row.consent_version).sort();
    const config = h.holder.context.config;
    expect(versions).toEqual(
      (["cs", "en", "sk"] as const).map((lang) => consentTextFor(config, lang).version).sort(),
    );
  });
});
