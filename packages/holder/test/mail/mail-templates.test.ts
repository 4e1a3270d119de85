/**
 * The person's e-mails: text and HTML from the same data, every one with the manage link, HTML
 * escaped, and offer links only when they are http(s).
 */
import { describe, expect, it } from "vitest";
import {
  confirmationMail,
  formatArea,
  formatMoney,
  matchDigestMail,
  type RenderedMail,
  withdrawnMail,
} from "../../src/mail/templates.js";

const common = {
  holderName: "Holder <Test> & Co",
  statement: 'A flat "with" <script>alert(1)</script>\nsecond line',
  manageUrl: "https://intents.example.sk/manage/M4n4g3T0k3n000000000000000000000",
};

const mails: [string, RenderedMail][] = [
  [
    "confirmation",
    confirmationMail({
      ...common,
      confirmUrl: "https://intents.example.sk/confirm/C0nf1rmT0k3n00000000000000000000",
      confirmExpiresAt: "2026-12-02T12:00:00.000Z",
      hasHiddenLimit: true,
    }),
  ],
  [
    "digest",
    matchDigestMail({
      ...common,
      matches: [
        {
          title: "Flat <b>3+1</b>",
          price: { amount: 6_500_000, currency: "CZK" },
          location: { country: "CZ", region: "CZ-64" },
          url: "https://example.cz/1?a=1&b=2",
        },
        {
          title: "Evil",
          price: { amount: 1, currency: "EUR" },
          location: { country: "SK" },
          url: "javascript:alert(1)",
        },
      ],
      more: 0,
    }),
  ],
  ["withdrawn", withdrawnMail({ ...common, withdrawnAt: "2026-12-01T08:30:00.000Z" })],
];

describe("mail templates", () => {
  it.each(mails)("%s: carries the manage link in text and HTML", (_name, mail) => {
    expect(mail.text).toContain(common.manageUrl);
    expect(mail.html).toContain(`href="${common.manageUrl}"`);
  });

  it.each(mails)("%s: escapes everything in HTML and quotes the statement in text", (_name, mail) => {
    expect(mail.html).not.toContain("<script>");
    expect(mail.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(mail.html).toContain("&quot;with&quot;");
    expect(mail.html).toContain("Holder &lt;Test&gt; &amp; Co");
    expect(mail.text).toContain('> A flat "with" <script>alert(1)</script>\n> second line');
    expect(mail.html).toMatch(/^<!doctype html>/);
    expect(mail.subject).not.toContain(common.statement.slice(0, 6));
  });

  it("text and HTML say the same things", () => {
    for (const [, mail] of mails) {
      const htmlText = mail.html
        .replace(/<a href="([^"]*)"[^>]*>/g, " $1 ")
        .replace(/<[^>]+>/g, " ")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, "&");
      const words = (s: string) => new Set(s.match(/[\p{L}\p{N}]{4,}/gu));
      const textWords = words(mail.text);
      for (const word of textWords) expect(htmlText).toContain(word);
    }
  });

  it("the digest shows title, price, place and a link, and never links a non-http URL", () => {
    const [, digest] = mails[1] as [string, RenderedMail];
    expect(digest.subject).toBe("2 new offers for your intent");
    expect(digest.text).toContain(
      "* Flat <b>3+1</b>\n  6,500,000 CZK\n  South Moravian region, Czechia\n  https://example.cz/1?a=1&b=2",
    );
    expect(digest.html).toContain(
      '<a href="https://example.cz/1?a=1&amp;b=2">Flat &lt;b&gt;3+1&lt;/b&gt;</a>',
    );
    expect(digest.html).not.toContain("javascript:");
    expect(digest.text).not.toContain("javascript:");
  });

  it("the confirmation mail says a limit is set, and when the link ends", () => {
    const [, confirmation] = mails[0] as [string, RenderedMail];
    expect(confirmation.text).toContain("A private price limit is set");
    expect(confirmation.text).toContain("2026-12-02 12:00 UTC");
    expect(confirmation.text).toContain("Confirm this intent:\nhttps://intents.example.sk/confirm/");
    const without = confirmationMail({
      ...common,
      confirmUrl: "https://x.example/confirm/a",
      confirmExpiresAt: "2026-12-02T12:00:00.000Z",
      hasHiddenLimit: false,
    });
    expect(without.text).not.toContain("price limit");
  });

  it("formats money and places", () => {
    expect(formatMoney({ amount: 15000, currency: "EUR" })).toBe("15,000 EUR");
    expect(formatArea({ country: "SK", region: "SK-BL" })).toBe("Bratislava region, Slovakia");
    expect(formatArea({ country: "CZ" })).toBe("Czechia");
    expect(formatArea({ country: "CZ", region: "CZ-99" })).toBe("CZ-99, Czechia");
  });
});
