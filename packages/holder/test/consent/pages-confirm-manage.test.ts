/**
 * The double opt-in page, the manage page and the dev mailbox over real HTTP on SQLite and
 * PostgreSQL: GET never confirms (mail scanners prefetch links), POST does; the manage page shows
 * the intent and the offers that arrived and withdraws in one action.
 */
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  carIntent,
  DAY,
  type FormClient,
  HIDDEN_LIMIT_SPELLINGS,
  heading,
  hiddenField,
  octaviaOffer,
  type PagesServer,
  startPagesServer,
  statusOf,
  T0,
  tokenOf,
} from "../support/pages-harness.js";

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let s: PagesServer;
  let n = 0;
  beforeAll(async () => {
    s = await startPagesServer(engine);
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Publish and give consent through the page; the person's browser and the mailed links. */
  const consented = async () => {
    n += 1;
    const email = `person${n}@example.sk`;
    const published = await s.intents.publish(carIntent());
    const person = s.browser();
    const path = `/consent/${tokenOf(published.consentUrl)}`;
    const form = await person.get(path);
    const given = await person.post(path, {
      csrf: hiddenField(form.html, "csrf") ?? "",
      consentVersion: s.ctx.config.consentVersion,
      email,
      consent: "yes",
    });
    expect(given.status).toBe(200);
    const [mail] = await s.mailbox.listMailbox({ to: email, limit: 1 });
    const confirm = /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1];
    const manage = /\/manage\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1];
    if (mail === undefined || confirm === undefined || manage === undefined)
      throw new Error("no confirmation mail");
    const status = () => statusOf(s, published.intent.id);
    return { published, person, email, mail, confirm, manage, status };
  };

  const post = async (
    person: FormClient,
    path: string,
    formPath: string,
    extra: Record<string, string> = {},
  ) => {
    const form = await person.get(formPath);
    return person.post(path, { csrf: hiddenField(form.html, "csrf") ?? "", ...extra });
  };

  const active = async () => {
    const flow = await consented();
    const done = await post(flow.person, `/confirm/${flow.confirm}`, `/confirm/${flow.confirm}`);
    expect(done.status).toBe(200);
    return flow;
  };

  describe("confirm", () => {
    it("GET shows a button and changes nothing, however often a scanner opens it", async () => {
      const { confirm, status } = await consented();
      for (let i = 0; i < 3; i += 1) {
        const page = await s.browser().get(`/confirm/${confirm}`);
        expect(page.status).toBe(200);
        expect(heading(page.html)).toBe("Confirm your e-mail address");
        expect(page.html).toMatch(
          new RegExp(`<form method="post" action="/confirm/${confirm}">[\\s\\S]*<button type="submit">`),
        );
      }
      const head = await s.browser().request(`/confirm/${confirm}`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await status()).toBe("awaiting_email_confirmation");
    });

    it("POST activates: 'your request is active', pointing at the manage link", async () => {
      const { person, confirm, status } = await consented();
      const page = await post(person, `/confirm/${confirm}`, `/confirm/${confirm}`);
      expect(page.status).toBe(200);
      expect(heading(page.html)).toBe("Your request is active");
      expect(page.html).toContain("A hidden limit is set.");
      for (const spelling of HIDDEN_LIMIT_SPELLINGS) expect(page.html).not.toContain(spelling);
      expect(await status()).toBe("active");
    });

    it("a POST without the form token, or from another site, is refused (403) and confirms nothing", async () => {
      const { person, confirm, status } = await consented();
      const path = `/confirm/${confirm}`;
      const form = await person.get(path);
      const csrf = hiddenField(form.html, "csrf") ?? "";
      expect((await person.post(path, {})).status).toBe(403);
      expect((await person.post(path, { csrf: "A".repeat(43) })).status).toBe(403);
      expect((await person.post(path, { csrf }, { "sec-fetch-site": "cross-site" })).status).toBe(403);
      expect((await person.post(path, { csrf }, { origin: "https://evil.example" })).status).toBe(403);
      // A stranger's own cookie and token do not make a forged request theirs: it needs the victim's cookie.
      const attacker = s.browser();
      const attackerForm = await attacker.get(path);
      expect((await person.post(path, { csrf: hiddenField(attackerForm.html, "csrf") ?? "" })).status).toBe(
        403,
      );
      expect(await status()).toBe("awaiting_email_confirmation");
    });

    it("an unknown confirm link → 404; an expired one → 410", async () => {
      const unknown = await post(s.browser(), `/confirm/${"Z".repeat(32)}`, `/confirm/${"Z".repeat(32)}`);
      expect(unknown.status).toBe(404);
      const { person, confirm, status } = await consented();
      const form = await person.get(`/confirm/${confirm}`);
      s.clock.advance(s.ctx.config.confirmTtlMs + 1);
      try {
        const late = await person.post(`/confirm/${confirm}`, { csrf: hiddenField(form.html, "csrf") ?? "" });
        expect(late.status).toBe(410);
        expect(heading(late.html)).toBe("This confirmation link no longer works");
        expect(await status()).toBe("expired");
      } finally {
        s.clock.set(T0);
      }
    });
  });

  describe("manage", () => {
    it("shows the intent, its status, no contact and no limit value, and no offers yet", async () => {
      const { manage, email } = await active();
      const page = await s.browser().get(`/manage/${manage}`);
      expect(page.status).toBe(200);
      expect(heading(page.html)).toBe("Your request");
      expect(page.html).toContain('<span class="badge active">Active</span>');
      expect(page.html).toContain("A Škoda Octavia combi");
      expect(page.html).toContain("Offers sent to you (0)");
      expect(page.html).not.toContain(email);
      for (const spelling of HIDDEN_LIMIT_SPELLINGS) expect(page.html).not.toContain(spelling);
      expect(page.html).toMatch(new RegExp(`<form method="post" action="/manage/${manage}/withdraw">`));
    });

    it("an imported offer that fits arrives on the manage page (title, price, place, link) and in a digest", async () => {
      const { manage, email } = await active();
      const ref = `page-${n}`;
      const result = await s.offers.importCatalogue([
        octaviaOffer(ref, { title: `Škoda Octavia Combi no. ${n}` }),
        {
          ...octaviaOffer(`${ref}-flat`),
          category: "property",
          title: "A flat that does not fit",
          attributes: {},
        },
      ]);
      expect(result.matched).toBeGreaterThanOrEqual(1);
      const page = await s.browser().get(`/manage/${manage}`);
      expect(page.html).toContain("Offers sent to you (1)");
      expect(page.html).toContain(
        `<a href="https://catalogue.example.sk/offers/${ref}" rel="noreferrer noopener nofollow">Škoda Octavia Combi no. ${n}</a>`,
      );
      expect(page.html).toContain("14,200 EUR");
      expect(page.html).toContain("Bratislava region, Slovakia");
      expect(page.html).toMatch(/Sent to you <time datetime="2026-11-30T12:00:00.000Z">/);
      expect(page.html).not.toContain("A flat that does not fit");
      const mails = await s.mailbox.listMailbox({ to: email });
      expect(mails.map((mail) => mail.subject)).toContain("A new offer for your intent");
    });

    it("withdraw in one action: the withdrawn page, the intent withdrawn at once, no more offers", async () => {
      const { manage, person, status } = await active();
      // Offers imported by earlier tests matched when the intent became active.
      const before = /Offers sent to you \((\d+)\)/.exec((await person.get(`/manage/${manage}`)).html)?.[1];
      expect(before).toBeDefined();
      const page = await post(person, `/manage/${manage}/withdraw`, `/manage/${manage}`);
      expect(page.status).toBe(200);
      expect(heading(page.html)).toBe("Your request is withdrawn");
      expect(page.html).toContain(`href="/manage/${manage}"`);
      expect(await status()).toBe("withdrawn");

      await s.offers.importCatalogue([octaviaOffer(`after-${n}`)]);
      const after = await s.browser().get(`/manage/${manage}`);
      expect(after.status).toBe(200);
      expect(after.html).toContain('<span class="badge ended">Withdrawn</span>');
      expect(after.html).toContain(`Offers sent to you (${before})`);
      expect(after.html).not.toContain(`offers/after-${n}`);
      expect(after.html).not.toContain("/withdraw");
    });

    it("withdraw refused without the form token or from another site (403): still active", async () => {
      const { manage, person, status } = await active();
      const path = `/manage/${manage}/withdraw`;
      const form = await person.get(`/manage/${manage}`);
      const csrf = hiddenField(form.html, "csrf") ?? "";
      expect((await person.post(path, { csrf: "" })).status).toBe(403);
      expect((await s.browser().post(path, { csrf })).status).toBe(403);
      expect((await person.post(path, { csrf }, { "sec-fetch-site": "same-site" })).status).toBe(403);
      expect((await person.post(path, { csrf }, { origin: "http://localhost:1" })).status).toBe(403);
      expect(await status()).toBe("active");
    });

    it("an unknown manage link → 404; GET on the withdraw address → 405 and withdraws nothing", async () => {
      expect((await s.browser().get(`/manage/${"Q".repeat(40)}`)).status).toBe(404);
      const { manage, status } = await active();
      const wrong = await s.browser().get(`/manage/${manage}/withdraw`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("allow")).toBe("POST");
      expect(await status()).toBe("active");
    });

    it("after the intent's validUntil the manage page says it expired and offers no withdraw", async () => {
      const { manage } = await active();
      s.clock.advance(s.ctx.config.defaultValidityMs + DAY);
      try {
        const page = await s.browser().get(`/manage/${manage}`);
        expect(page.status).toBe(200);
        expect(page.html).toContain('<span class="badge ended">Expired</span>');
        expect(page.html).not.toContain("/withdraw");
      } finally {
        s.clock.set(T0);
      }
    });
  });

  describe("dev mailbox", () => {
    it("lists the mails (newest first) and shows one with its links clickable", async () => {
      const { email, mail, confirm, manage } = await consented();
      const list = await s.browser().get("/dev/mailbox");
      expect(list.status).toBe(200);
      expect(heading(list.html)).toBe("Local mailbox");
      expect(list.html).toContain(`<a href="/dev/mailbox/${mail.id}">${mail.subject}</a>`);
      expect(list.html).toContain(email);

      const one = await s.browser().get(`/dev/mailbox/${mail.id}`);
      expect(one.status).toBe(200);
      expect(heading(one.html)).toBe(mail.subject);
      expect(one.html).toContain(
        `<a href="${s.origin}/confirm/${confirm}">${s.origin}/confirm/${confirm}</a>`,
      );
      expect(one.html).toContain(`<a href="${s.origin}/manage/${manage}">`);
    });

    it("an id that is not a number, or no mail → 404; other methods → 405", async () => {
      for (const id of ["abc", "0", "-1", "1e3", "9".repeat(20), "99999999"]) {
        expect((await s.browser().get(`/dev/mailbox/${id}`)).status, id).toBe(404);
      }
      const put = await s.browser().request("/dev/mailbox", { method: "DELETE" });
      expect(put.status).toBe(405);
    });
  });
  describe("renew (issue 16 item 12: renewal needs the person's fresh action)", () => {
    const validUntilOf = async (id: string) =>
      Number(
        (
          await s.ctx.store.db
            .selectFrom("holder_intents")
            .select("valid_until")
            .where("id", "=", id)
            .executeTakeFirstOrThrow()
        ).valid_until,
      );
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

    it("the manage page renews validUntil to the end of the chosen day; the page shows the new end", async () => {
      const { manage, person, published } = await active();
      const page = await person.get(`/manage/${manage}`);
      expect(page.html).toMatch(new RegExp(`<form method="post" action="/manage/${manage}/renew">`));
      const target = s.clock.now() + 100 * DAY;
      const done = await post(person, `/manage/${manage}/renew`, `/manage/${manage}`, {
        validUntil: day(target),
      });
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe(`/manage/${manage}#renew`);
      const expected = Date.parse(`${day(target)}T23:59:59.999Z`);
      expect(await validUntilOf(published.intent.id)).toBe(expected);
      expect((await person.get(`/manage/${manage}`)).html).toContain(`value="${day(target)}"`);
    });

    it("refuses a past day, a day beyond the longest validity, and a post without the form token", async () => {
      const { manage, person, published } = await active();
      const before = await validUntilOf(published.intent.id);
      const past = await post(person, `/manage/${manage}/renew`, `/manage/${manage}`, {
        validUntil: day(s.clock.now() - DAY),
      });
      expect(past.status).toBe(400);
      expect(past.html).toContain("must be in the future");
      const far = await post(person, `/manage/${manage}/renew`, `/manage/${manage}`, {
        validUntil: day(s.clock.now() + 400 * DAY),
      });
      expect(far.status).toBe(400);
      const forged = await person.post(`/manage/${manage}/renew`, {
        validUntil: day(s.clock.now() + 60 * DAY),
      });
      expect(forged.status).toBe(403);
      expect(await validUntilOf(published.intent.id)).toBe(before);
    });

    it("a withdrawn request offers no renewal and refuses one", async () => {
      const { manage, person } = await active();
      const form = await person.get(`/manage/${manage}`); // its form token, taken while it was active
      await post(person, `/manage/${manage}/withdraw`, `/manage/${manage}`);
      const page = await person.get(`/manage/${manage}`);
      expect(page.html).not.toContain("/renew");
      const refused = await person.post(`/manage/${manage}/renew`, {
        csrf: hiddenField(form.html, "csrf") ?? "",
        validUntil: day(s.clock.now() + 60 * DAY),
      });
      expect(refused.status).toBe(410);
    });
  });
});
