/**
 * The consent page over real HTTP on SQLite and PostgreSQL: what it shows (consent-link rules 2
 * and 5), first-come takeover (rule 3), and every refused submission changing nothing.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  carIntent,
  DAY,
  HIDDEN_LIMIT_SPELLINGS,
  HOUR,
  heading,
  hiddenField,
  type PagesServer,
  startPagesServer,
  statusOf,
  T0,
  tokenOf,
} from "../support/pages-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let s: PagesServer;
  beforeAll(async () => {
    s = await startPagesServer(engine);
  });
  afterAll(async () => {
    await s?.close();
  });

  /** A fresh draft and its consent path. */
  const draft = async (more: Parameters<typeof carIntent>[0] = {}) => {
    const published = await s.intents.publish(carIntent(more));
    const path = `/consent/${tokenOf(published.consentUrl)}`;
    const status = () => statusOf(s, published.intent.id);
    return { published, path, status };
  };

  const mailCount = async () => (await s.mailbox.listMailbox({ limit: 1000 })).length;

  it("shows the statement, criteria, area, budget, the consent text and version, and an unticked box", async () => {
    const { path } = await draft();
    const page = await s.browser().get(path);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
    expect(page.html.startsWith("<!doctype html>")).toBe(true);
    expect(page.html).toContain('<html lang="en">');
    expect(heading(page.html)).toBe("Agree to keep this request");
    expect(page.html).toContain("A Škoda Octavia combi, diesel, at most 120,000 km, near Bratislava");
    expect(page.html).toContain("Škoda Octavia");
    expect(page.html).toContain("At most 120,000 km on the clock");
    expect(page.html).toContain("Bratislava region, Slovakia");
    expect(page.html).toContain("15,000 EUR");
    expect(page.html).toContain(s.ctx.config.consentText);
    expect(page.html).toContain(`Version ${s.ctx.config.consentVersion}`);
    expect(page.html).toMatch(/<label for="email">Your e-mail address<\/label>/);
    expect(page.html).toMatch(/<input type="email" id="email" name="email" autocomplete="email"/);
    const checkbox = /<input type="checkbox"[^>]*>/.exec(page.html)?.[0] ?? "";
    expect(checkbox).toContain('id="consent"');
    expect(checkbox).not.toContain("checked");
    expect(page.html).toMatch(/<label for="consent">I agree to the consent text above/);
    expect(page.html).toMatch(new RegExp(`<form method="post" action="${path}">`));
    expect(hiddenField(page.html, "consentVersion")).toBe(s.ctx.config.consentVersion);
    expect(hiddenField(page.html, "csrf")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.html).not.toMatch(/<script/i);
  });

  it("rule 5: says a hidden limit is set, never its value", async () => {
    const { path } = await draft();
    const page = await s.browser().get(path);
    expect(page.html).toContain("A hidden limit is set.");
    for (const spelling of HIDDEN_LIMIT_SPELLINGS) expect(page.html).not.toContain(spelling);

    const without = await draft({ hiddenLimit: undefined });
    const plain = await s.browser().get(without.path);
    expect(plain.html).not.toContain("A hidden limit is set.");
  });

  it("escapes the agent's statement (no markup from an agent reaches the page)", async () => {
    const { path } = await draft({
      statement: 'A flat <script>alert("x")</script> <img src=x onerror=alert(1)>',
    });
    const page = await s.browser().get(path);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain("<script>");
    expect(page.html).not.toContain("<img");
    expect(page.html).toContain("&lt;script&gt;");
  });

  it("consent and e-mail → 'check your e-mail', one confirmation mail, the intent awaits confirmation", async () => {
    const { path, status } = await draft();
    const person = s.browser();
    const form = await person.get(path);
    const before = await mailCount();
    const done = await person.post(path, {
      csrf: hiddenField(form.html, "csrf") ?? "",
      consentVersion: s.ctx.config.consentVersion,
      email: "  jana.novakova@example.sk ",
      consent: "yes",
    });
    expect(done.status).toBe(200);
    expect(heading(done.html)).toBe("Check your e-mail");
    expect(done.html).toContain('href="/dev/mailbox"');
    expect(done.html).not.toContain("jana.novakova");
    expect(await mailCount()).toBe(before + 1);
    const [mail] = await s.mailbox.listMailbox({ to: "jana.novakova@example.sk", limit: 1 });
    expect(mail?.subject).toMatch(/^Confirm your intent/);
    expect(await status()).toBe("awaiting_email_confirmation");
  });

  it("rule 3: first-come — once consent is given, the link shows 'already used' (410) to everyone", async () => {
    const { path, status } = await draft();
    const first = s.browser();
    const second = s.browser();
    const firstForm = await first.get(path);
    const secondForm = await second.get(path);
    const fields = (html: string, email: string) => ({
      csrf: hiddenField(html, "csrf") ?? "",
      consentVersion: s.ctx.config.consentVersion,
      email,
      consent: "yes",
    });
    expect((await first.post(path, fields(firstForm.html, "first@example.sk"))).status).toBe(200);
    const late = await second.post(path, fields(secondForm.html, "second@example.sk"));
    expect(late.status).toBe(410);
    expect(heading(late.html)).toBe("This link has already been used");
    expect(await s.mailbox.listMailbox({ to: "second@example.sk" })).toHaveLength(0);
    expect((await second.get(path)).status).toBe(410);
    expect(await status()).toBe("awaiting_email_confirmation");
  });

  it("two people submitting at the same moment: exactly one wins", async () => {
    const { path } = await draft();
    const people = [s.browser(), s.browser(), s.browser(), s.browser()];
    const forms = await Promise.all(people.map((person) => person.get(path)));
    const results = await Promise.all(
      people.map((person, i) =>
        person.post(path, {
          csrf: hiddenField(forms[i]?.html ?? "", "csrf") ?? "",
          consentVersion: s.ctx.config.consentVersion,
          email: `racer${i}@example.sk`,
          consent: "yes",
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 410, 410, 410]);
  });

  describe("refused submissions change nothing", () => {
    const submit = async (path: string, fields: Record<string, string | undefined>) => {
      const person = s.browser();
      const form = await person.get(path);
      const base: Record<string, string> = {
        csrf: hiddenField(form.html, "csrf") ?? "",
        consentVersion: s.ctx.config.consentVersion,
        email: "jana@example.sk",
        consent: "yes",
      };
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined) delete base[name];
        else base[name] = value;
      }
      return person.post(path, base);
    };

    it("missing checkbox → 400, the form again with the error, the e-mail kept", async () => {
      const { path, status } = await draft();
      const before = await mailCount();
      const page = await submit(path, { consent: undefined });
      expect(page.status).toBe(400);
      expect(page.html).toContain("Tick the box to agree to the consent text.");
      expect(page.html).toContain('role="alert"');
      expect(page.html).toMatch(/<title>Error: /);
      expect(page.html).toContain('value="jana@example.sk"');
      expect(/<input type="checkbox"[^>]*>/.exec(page.html)?.[0]).not.toContain("checked");
      expect(await mailCount()).toBe(before);
      expect(await status()).toBe("awaiting_consent");
      expect((await s.browser().get(path)).status).toBe(200);
    });

    it("a checkbox value other than 'yes' is not consent", async () => {
      const { path, status } = await draft();
      expect((await submit(path, { consent: "on" })).status).toBe(400);
      expect(await status()).toBe("awaiting_consent");
    });

    // The words come from the service's address check (domain/consent.ts normaliseEmail): the page
    // shows them as they are, so only their presence and the page's own framing are pinned here.
    it.each([
      ["empty", ""],
      ["no @", "jana.example.sk"],
      ["two @", "jana@@example.sk"],
      ["no domain dot", "jana@localhost"],
      ["IP literal", "jana@[127.0.0.1]"],
      ["spaces inside", "jana novakova@example.sk"],
      ["overlong", `${"a".repeat(250)}@example.sk`],
      ["header injection", "jana@example.sk\r\nBcc: all@example.sk"],
    ])("malformed e-mail (%s) → 400 with a clear message", async (_name, email) => {
      const { path, status } = await draft();
      const before = await mailCount();
      const page = await submit(path, { email });
      expect(page.status).toBe(400);
      const shown = /<span class="error" id="email-error">Error: ([^<]{10,})<\/span>/.exec(page.html)?.[1];
      expect(shown).toMatch(email === "" ? /^Enter your e-mail address\.$/ : /^[A-Z].*\.$/);
      expect(page.html).toContain(`<a href="#email">${shown}</a>`);
      expect(page.html).toContain('aria-invalid="true"');
      expect(page.html).toContain('aria-describedby="email-hint email-error"');
      expect(await mailCount()).toBe(before);
      expect(await status()).toBe("awaiting_consent");
    });

    it("a consent text that changed since the page was shown → 409, read it again", async () => {
      const { path, status } = await draft();
      const page = await submit(path, { consentVersion: "2020-01-01" });
      expect(page.status).toBe(409);
      expect(page.html).toContain("The consent text has changed since you opened this page.");
      expect(hiddenField(page.html, "consentVersion")).toBe(s.ctx.config.consentVersion);
      expect(await status()).toBe("awaiting_consent");
    });
  });

  it("an unknown (well-formed) token → 404; malformed and overlong tokens → 404 without a lookup", async () => {
    const unknown = await s.browser().get(`/consent/${"A".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(heading(unknown.html)).toBe("We do not know this link");
    for (const token of [
      "x".repeat(129),
      "short",
      "abc%20def%3Cscript%3E",
      "..%2F..%2Fetc",
      "a".repeat(5000),
    ]) {
      const page = await s.browser().get(`/consent/${token}`);
      expect(page.status, token).toBe(404);
      expect(page.html).not.toContain(decodeURIComponent(token).slice(0, 40));
    }
    const posted = await s
      .browser()
      .post(`/consent/${"x".repeat(200)}`, { email: "a@example.sk", consent: "yes" });
    expect(posted.status).toBe(404);
  });

  it("a draft nobody agreed to within 24 h → 410 'expired', and it cannot be taken", async () => {
    const { path, status } = await draft();
    const person = s.browser();
    const form = await person.get(path);
    s.clock.advance(DAY + HOUR);
    try {
      const page = await person.get(path);
      expect(page.status).toBe(410);
      expect(heading(page.html)).toBe("This link has expired");
      const late = await person.post(path, {
        csrf: hiddenField(form.html, "csrf") ?? "",
        consentVersion: s.ctx.config.consentVersion,
        email: "late@example.sk",
        consent: "yes",
      });
      expect(late.status).toBe(410);
      expect(await s.mailbox.listMailbox({ to: "late@example.sk" })).toHaveLength(0);
      expect(await status()).toBe("expired");
    } finally {
      s.clock.set(T0);
    }
  });
});
