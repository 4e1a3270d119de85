/**
 * What a client or a seller chose is shown to the person as quoted words, never as a link one can
 * click or copy: an assistant registers itself (RFC 7591, /oauth/reg) under a name that reads as
 * the holder's own warning with a phishing URL in it. The sign-in page, the consent page, the
 * sign-in mail and the manage page name it defanged (`https[:]//x[.]example`), and the manage
 * page shows a seller's offer title with a URL in it the same way. A whole holder on loopback,
 * driven with fetch as a browser without JavaScript.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalMailbox } from "../../src/mail/local-mailbox.js";
import {
  closeHolders,
  connectWith,
  EMAIL,
  type HolderOnLoopback,
  holderOn,
  registerClient,
  signedInClient,
  tool,
} from "../support/oauth-harness.js";
import { flatOffer } from "../support/offer-helpers.js";

const NAME = "URGENT re-verify now at https://doorbell-verify.evil.example/login";
const SHOWN = "URGENT re-verify now at https[:]//doorbell-verify[.]evil[.]example/login";
const OFFER_TITLE = "Byt 2+1 - call now, see www.flat-deal.evil.example or 203.0.113.7/offer";
const OFFER_SHOWN = "Byt 2+1 - call now, see www[.]flat-deal[.]evil[.]example or 203[.]0[.]113[.]7/offer";
/** Every form a link to the attacker's hosts could take on a page. */
const VERBATIM = ["https://doorbell-verify", "doorbell-verify.evil", "evil.example", "203.0.113.7"];

describe("words a client or a seller chose, on the person's pages", () => {
  let dir: string;
  let h: HolderOnLoopback;
  let assistant: Client | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "doorbell-defang-"));
    h = await holderOn(path.join(dir, "holder.db"));
  }, 60_000);
  afterAll(async () => {
    await assistant?.close();
    await closeHolders(h);
    rmSync(dir, { recursive: true, force: true });
  });

  it("are shown defanged: no URL of the client's or the seller's survives verbatim", async () => {
    const clientId = await registerClient(h.origin, "http://127.0.0.1:9/callback", {
      client_name: NAME,
      client_uri: "https://doorbell-verify.evil.example/",
    });
    const pages: string[] = [];
    const { tokens, browser } = await signedInClient(h, { clientId, sees: { clientName: SHOWN, pages } });
    expect(pages).toHaveLength(2);

    assistant = await connectWith(h.origin, tokens.access_token);
    await tool(assistant, "intent_publish_intent", {
      statement: "A two-room flat in Bratislava, at most 200,000 EUR",
      criteria: { category: "property", kind: "flat", roomsMin: 2 },
      area: { country: "SK", region: "SK-BL" },
      budget: { amount: 200_000, currency: "EUR" },
    });
    await h.holder.services.offers.importCatalogue([
      flatOffer({
        title: OFFER_TITLE,
        price: { amount: 180_000, currency: "EUR" },
        location: { country: "SK", region: "SK-BL" },
      }),
    ]);
    const mails = await (h.holder.context.mailer as LocalMailbox).listMailbox({ to: EMAIL, limit: 20 });
    const managePath = mails
      .map((mail) => /\/manage\/[0-9A-Za-z]+/.exec(mail.text)?.[0])
      .find((found) => found !== undefined);
    const manage = await (await browser.go(managePath as string)).response.text();
    expect(manage).toContain(OFFER_SHOWN);
    const signInMail = mails.find((mail) => mail.text.includes("/signin/"));

    for (const [where, text] of [
      ["sign-in page", pages[0]],
      ["consent page", pages[1]],
      ["manage page", manage],
      ["sign-in mail", `${signInMail?.text}\n${signInMail?.html}`],
    ] as const) {
      expect(text, where).toContain(SHOWN);
      for (const verbatim of VERBATIM) expect(text, `${where}: ${verbatim}`).not.toContain(verbatim);
    }
  }, 30_000);
});
