/**
 * The pages' protections, over real HTTP against counting stand-in services (no database): the
 * headers on every answer, the form cookie, body limits, content types, methods, token shapes,
 * and how each service refusal becomes a page. "Changes nothing" here means the service was
 * never called.
 */
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Fragment, jsx } from "hono/jsx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/context.js";
import { MAX_FORM_BYTES } from "../../src/html/security.js";
import type { ConsentService, ConsentView } from "../../src/model/services.js";
import { HolderError, type Intent, type Match } from "../../src/model/types.js";
import { linkify } from "../../src/web/pages/mailbox-views.js";
import { type PagesDeps, personPages } from "../../src/web/person-pages.js";
import { FormClient, heading, hiddenField } from "../support/pages-harness.js";

const TOKEN = "Tok3nTok3nTok3nTok3nTok3nTok3nAB";

const intent: Intent = {
  id: "int_stub",
  status: "active",
  statement: "A flat in Brno",
  criteria: { category: "property", kind: "flat", roomsMin: 3 },
  area: { country: "CZ", region: "CZ-64" },
  budget: { amount: 6_500_000, currency: "CZK" },
  hasHiddenLimit: true,
  validUntil: "2026-12-30T12:00:00.000Z",
  visibility: "pseudonymous",
  createdAt: "2026-11-30T12:00:00.000Z",
};

const offer = (id: string, more: Partial<Match["offer"]> = {}): Match["offer"] => ({
  id,
  source: { kind: "catalogue", ref: id },
  title: `Flat ${id}`,
  category: "property",
  price: { amount: 6_000_000, currency: "CZK" },
  location: { country: "CZ", region: "CZ-64" },
  attributes: { kind: "flat", rooms: 3 },
  publishedAt: "2026-11-29T12:00:00.000Z",
  ...more,
});

/** Stand-in services: every call counted; `next` decides what the next call does. */
function stub() {
  const calls: string[] = [];
  const state: { view: ConsentView; failWith?: unknown; matches: Match[] } = {
    view: { state: "open", intent, consentText: "The consent text.", consentVersion: "v1" },
    matches: [],
  };
  const act = async <T>(name: string, value: () => T): Promise<T> => {
    calls.push(name);
    if (state.failWith !== undefined) throw state.failWith;
    return value();
  };
  const consent: ConsentService = {
    consentView: (token) => act(`consentView:${token}`, () => state.view),
    giveConsent: (token) => act(`giveConsent:${token}`, () => ({ sentTo: "your e-mail" as const })),
    confirmEmail: (token) => act(`confirmEmail:${token}`, () => intent),
    confirmState: (token) => act(`confirmState:${token}`, () => "open" as const),
    manageView: (token) => act(`manageView:${token}`, () => ({ intent, matches: state.matches })),
    withdrawByManageToken: (token) =>
      act(`withdrawByManageToken:${token}`, () => ({ ...intent, status: "withdrawn" as const })),
  };
  return { calls, state, consent };
}

async function start(deps: PagesDeps) {
  const app = new Hono();
  app.route("/", personPages(deps));
  const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("pages: headers, forms, methods and refusals", () => {
  const s = stub();
  const logged: unknown[] = [];
  let origin = "";
  let close: () => Promise<void> = async () => {};
  const browser = () => new FormClient(origin);

  beforeAll(async () => {
    const started = await start({
      consent: s.consent,
      config: defaultConfig("http://127.0.0.1:1"),
      mailbox: { listMailbox: async () => [] },
      log: { error: (...args: unknown[]) => void logged.push(args) } as unknown as PagesDeps["log"],
    });
    origin = started.origin;
    close = started.close;
  });
  afterAll(() => close());

  /** A consent POST with a valid form token; `fields` override. */
  const consentPost = async (fields: Record<string, string> = {}, headers: Record<string, string> = {}) => {
    const person = browser();
    const form = await person.get(`/consent/${TOKEN}`);
    return person.post(
      `/consent/${TOKEN}`,
      {
        csrf: hiddenField(form.html, "csrf") ?? "",
        consentVersion: "v1",
        email: "a@example.cz",
        consent: "yes",
        ...fields,
      },
      headers,
    );
  };

  const gaveConsent = () => s.calls.filter((call) => call.startsWith("giveConsent")).length;

  it("every answer, errors included, carries the CSP (no script), no-referrer, no-store, nosniff", async () => {
    const answers = [
      await browser().get(`/consent/${TOKEN}`),
      await browser().get("/consent/x"),
      await browser().request(`/consent/${TOKEN}`, { method: "PUT" }),
      await browser().post(`/manage/${TOKEN}/withdraw`, {}),
      await browser().get("/dev/mailbox"),
    ];
    for (const page of answers) {
      const csp = page.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'none'");
      expect(csp).toContain("form-action 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      expect(page.html).not.toMatch(/<script/i);
    }
  });

  it("the CSP allows exactly the page's one inline stylesheet, by hash", async () => {
    const page = await browser().get(`/consent/${TOKEN}`);
    const css = /<style>([\s\S]*?)<\/style>/.exec(page.html)?.[1] ?? "";
    expect(css.length).toBeGreaterThan(100);
    const hash = createHash("sha256").update(css, "utf8").digest("base64");
    expect(page.headers.get("content-security-policy")).toContain(`style-src 'sha256-${hash}'`);
    expect(page.html).toContain(":focus-visible{outline:3px solid");
  });

  it("the form cookie is HttpOnly, SameSite=Strict, path /; reused while valid", async () => {
    const person = browser();
    const first = await person.get(`/consent/${TOKEN}`);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^doorbell_form=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const again = await person.get(`/consent/${TOKEN}`);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(hiddenField(again.html, "csrf")).toBe(hiddenField(first.html, "csrf"));
  });

  it("with an https publicUrl the cookie is __Host- and Secure", async () => {
    const other = await start({
      consent: stub().consent,
      config: defaultConfig("https://intents.example.sk"),
    });
    try {
      const page = await new FormClient(other.origin).get(`/consent/${TOKEN}`);
      expect(page.headers.get("set-cookie")).toMatch(
        /^__Host-doorbell_form=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
      );
    } finally {
      await other.close();
    }
  });

  it("a good submission reaches the service once (the baseline for the refusals below)", async () => {
    const before = gaveConsent();
    const page = await consentPost();
    expect(page.status).toBe(200);
    expect(gaveConsent()).toBe(before + 1);
  });

  it("an Origin of the holder's publicUrl or of the request itself is accepted; any other refused", async () => {
    const before = gaveConsent();
    expect((await consentPost({}, { origin })).status).toBe(200);
    expect((await consentPost({}, { origin: "http://127.0.0.1:1" })).status).toBe(200);
    expect((await consentPost({}, { origin: "http://127.0.0.1:2" })).status).toBe(403);
    expect((await consentPost({}, { origin: "https://127.0.0.1:1" })).status).toBe(403);
    expect(gaveConsent()).toBe(before + 2);
  });

  it("a browser without Sec-Fetch-Site is still held by the cookie check", async () => {
    const before = gaveConsent();
    const person = browser();
    const form = await person.get(`/consent/${TOKEN}`);
    const fields = {
      csrf: hiddenField(form.html, "csrf") ?? "",
      consentVersion: "v1",
      email: "a@example.cz",
      consent: "yes",
    };
    const oldBrowser = { "sec-fetch-site": undefined, origin: undefined };
    expect((await person.post(`/consent/${TOKEN}`, fields, oldBrowser)).status).toBe(200);
    const forged = await fetch(`${origin}/consent/${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("This form could not be accepted");
    expect(gaveConsent()).toBe(before + 1);
  });

  it("a form body over 16 KB → 413 (with or without Content-Length); just under is read", async () => {
    const before = gaveConsent();
    const big = await consentPost({ padding: "x".repeat(MAX_FORM_BYTES) });
    expect(big.status).toBe(413);
    expect(heading(big.html)).toBe("This form is too large");

    const person = browser();
    const form = await person.get(`/consent/${TOKEN}`);
    const body = new URLSearchParams({
      csrf: hiddenField(form.html, "csrf") ?? "",
      consentVersion: "v1",
      email: "a@example.cz",
      consent: "yes",
      padding: "y".repeat(MAX_FORM_BYTES * 4),
    }).toString();
    const chunked = await person.request(`/consent/${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: Readable.toWeb(Readable.from([body.slice(0, 1000), body.slice(1000)])) as ReadableStream,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(gaveConsent()).toBe(before);

    const fits = await consentPost({ padding: "z".repeat(MAX_FORM_BYTES - 1024) });
    expect(fits.status).toBe(200);
    expect(gaveConsent()).toBe(before + 1);
  });

  it("only HTML form encodings are read: JSON → 415, a file part → 400", async () => {
    const before = gaveConsent();
    const person = browser();
    await person.get(`/consent/${TOKEN}`);
    const json = await person.request(`/consent/${TOKEN}`, {
      method: "POST",
      headers: { "content-type": "application/json", "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ email: "a@example.cz", consent: "yes" }),
    });
    expect(json.status).toBe(415);
    const multipart = new FormData();
    multipart.set("email", "a@example.cz");
    multipart.set("file", new Blob(["x"]), "x.txt");
    const file = await person.request(`/consent/${TOKEN}`, {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin" },
      body: multipart,
    });
    expect(file.status).toBe(400);
    expect(gaveConsent()).toBe(before);
  });

  it("wrong methods → 405 with Allow, and no service call", async () => {
    const before = s.calls.length;
    for (const [path, allow] of [
      [`/consent/${TOKEN}`, "GET, HEAD, POST"],
      [`/confirm/${TOKEN}`, "GET, HEAD, POST"],
      [`/manage/${TOKEN}`, "GET, HEAD"],
      [`/manage/${TOKEN}/withdraw`, "POST"],
      ["/dev/mailbox", "GET, HEAD"],
    ] as const) {
      for (const method of ["PUT", "DELETE", "PATCH"]) {
        const page = await browser().request(path, { method });
        expect(page.status, `${method} ${path}`).toBe(405);
        expect(page.headers.get("allow")).toBe(allow);
      }
    }
    const post = await browser().post(`/manage/${TOKEN}`, {});
    expect(post.status).toBe(405);
    expect(s.calls.length).toBe(before);
  });

  it("malformed or overlong tokens are 'unknown link' (404) without asking the service", async () => {
    const before = s.calls.length;
    for (const token of [
      "short",
      "x".repeat(129),
      "has.dot.inside.the.token.value",
      "%00%00%00%00%00%00%00%00%00",
    ]) {
      for (const path of [`/consent/${token}`, `/confirm/${token}`, `/manage/${token}`]) {
        const page = await browser().get(path);
        expect(page.status, path).toBe(404);
      }
      expect((await browser().post(`/manage/${token}/withdraw`, {})).status).toBe(404);
    }
    expect(s.calls.length).toBe(before);
  });

  it("taken / expired / unknown consent views → 410 / 410 / 404", async () => {
    try {
      for (const [state, status, title] of [
        ["taken", 410, "This link has already been used"],
        ["expired", 410, "This link has expired"],
        ["unknown", 404, "We do not know this link"],
      ] as const) {
        s.state.view = { state };
        const page = await browser().get(`/consent/${TOKEN}`);
        expect(page.status).toBe(status);
        expect(heading(page.html)).toBe(title);
      }
    } finally {
      s.state.view = { state: "open", intent, consentText: "The consent text.", consentVersion: "v1" };
    }
  });

  it("service refusals become pages: 404, 410, 409→410, 429, 503; anything else 500, logged without the token", async () => {
    const cases: [unknown, number][] = [
      [new HolderError("ERR_HOLDER_NOT_FOUND", "no such link"), 404],
      [new HolderError("ERR_HOLDER_GONE", "gone"), 410],
      [new HolderError("ERR_HOLDER_CONFLICT", "raced"), 410],
      [new HolderError("ERR_HOLDER_RATE_LIMITED", "slow down"), 429],
      [new HolderError("ERR_HOLDER_UNAVAILABLE", "the mail server is away; nothing was saved"), 503],
      [new Error(`database exploded near ${TOKEN}`), 500],
    ];
    for (const [error, status] of cases) {
      const person = browser();
      const form = await person.get(`/manage/${TOKEN}`);
      s.state.failWith = error;
      try {
        const page = await person.post(`/manage/${TOKEN}/withdraw`, {
          csrf: hiddenField(form.html, "csrf") ?? "",
        });
        expect(page.status, String(error)).toBe(status);
        expect(page.html).not.toContain(TOKEN.slice(0, 20) + TOKEN.slice(20));
        if (status === 503) expect(page.html).toContain("the mail server is away; nothing was saved");
        if (status === 500) expect(page.html).not.toContain("database exploded");
      } finally {
        s.state.failWith = undefined;
      }
    }
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged)).toContain("database exploded near [redacted]");
    expect(JSON.stringify(logged)).not.toContain(TOKEN.slice(0, 16));
  });

  it("the manage page links only http(s) offer URLs, newest first, and marks sellers' replies", async () => {
    s.state.matches = [
      { offer: offer("old", { url: "javascript:alert(1)" }), deliveredAt: "2026-11-30T10:00:00.000Z" },
      {
        offer: offer("reply", {
          source: { kind: "reply" },
          inReplyTo: "int_stub",
          url: "https://seller.example.cz/x",
        }),
        deliveredAt: "2026-11-30T11:00:00.000Z",
      },
    ];
    try {
      const page = await browser().get(`/manage/${TOKEN}`);
      expect(page.status).toBe(200);
      expect(page.html).not.toContain("javascript:");
      expect(page.html).toContain("<h3>Flat old</h3>");
      expect(page.html.indexOf("Flat reply")).toBeLessThan(page.html.indexOf("Flat old"));
      expect(page.html).toContain("A seller&#39;s answer to your request.");
      expect(page.html).toContain("6,000,000 CZK");
      expect(page.html).toContain("South Moravian region, Czechia");
      expect(page.html).toContain("At least 3 rooms");
      expect(page.html).toContain("Pseudonymous:");
    } finally {
      s.state.matches = [];
    }
  });

  it("without a mailbox there is no /dev/mailbox", async () => {
    const other = await start({ consent: stub().consent, config: defaultConfig("http://127.0.0.1:1") });
    try {
      expect((await new FormClient(other.origin).get("/dev/mailbox")).status).toBe(404);
      expect((await new FormClient(other.origin).get("/dev/mailbox/1")).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});

describe("linkify (the dev mailbox's mail text)", () => {
  const html = (text: string) => String(jsx(Fragment, {}, ...linkify(text)));

  it("links http(s) URLs, leaves trailing punctuation and other schemes as text, escapes the rest", () => {
    expect(html("Open https://h.example/confirm/abc.")).toBe(
      'Open <a href="https://h.example/confirm/abc">https://h.example/confirm/abc</a>.',
    );
    expect(html("(see http://h.example/m/x)")).toBe(
      '(see <a href="http://h.example/m/x">http://h.example/m/x</a>)',
    );
    expect(html("javascript:alert(1) <b>x</b>")).toBe("javascript:alert(1) &lt;b&gt;x&lt;/b&gt;");
    expect(html('https://h.example/a"onmouseover="x')).toBe(
      '<a href="https://h.example/a">https://h.example/a</a>&quot;onmouseover=&quot;x',
    );
  });
});
