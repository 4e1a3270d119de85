import { beforeAll, describe, expect, it } from "vitest";
import { composeAgreementMail } from "../src/email/compose.js";
import { dkimSignMail } from "../src/email/dkim.js";
import { receiveAgreementMail } from "../src/email/receive.js";
import { signMessage } from "../src/jws/sign.js";
import { validateMessage } from "../src/message/parse.js";
import type { Message } from "../src/message/types.js";
import {
  askQuote,
  dnsZone,
  makeParties,
  memoryState,
  type Party,
  quote,
  resolverFor,
} from "./inbox-parties.js";

const NOW = 1_800_000_000;
let seller: Party;
let buyer: Party;
let ask: { message: Message; hash: string };

beforeAll(async () => {
  ({ seller, buyer } = await makeParties());
  const parsed = validateMessage(askQuote(buyer, seller, NOW - 60));
  ask = { message: parsed.message, hash: parsed.hash };
});

interface MailOptions {
  sign?: boolean;
  dkimKey?: Party["dkim"];
  edit?: (raw: string) => string;
  message?: Message;
}

/** The seller's quote to the buyer as it leaves the seller's server. */
async function quoteMail(options: MailOptions = {}) {
  const message = options.message ?? quote(seller, buyer, NOW, ask);
  const signed =
    options.sign === false ? undefined : await signMessage(message, seller.key, { jku: seller.jku });
  let raw = await composeAgreementMail({ message, ...(signed ? { jws: signed.jws } : {}) });
  if (options.edit) raw = Buffer.from(options.edit(raw.toString("latin1")), "latin1");
  return dkimSignMail(raw, options.dkimKey ?? seller.dkim);
}

async function receive(raw: Buffer, state = memoryState({ [ask.message.id]: ask.hash }), now = NOW + 10) {
  return receiveAgreementMail(raw, {
    inbox: buyer.address,
    state,
    resolveKey: await resolverFor(seller, buyer),
    now,
    mailAuth: { resolver: dnsZone(seller, buyer), mta: "mx.buyer.example" },
  });
}

describe("What a receiver checks before acting (e-mail)", () => {
  it("a DKIM-aligned, signed, fresh quote is signed and checked", async () => {
    const { verdict, auth } = await receive(await quoteMail());
    expect(auth.authenticatedFrom).toBe(seller.address);
    expect(auth.authenticationResults).toMatch(/dkim=pass header\.i=@seller\.example/);
    expect(verdict).toMatchObject({ result: "signed_and_checked", refused: false });
    expect(verdict.signer?.party).toBe(seller.party);
  });

  it("an unsigned quote that passes the mail checks is mail checks only", async () => {
    const { verdict } = await receive(await quoteMail({ sign: false }));
    expect(verdict).toMatchObject({ result: "mail_checks_only", code: "ERR_UNSIGNED" });
  });

  it("DKIM by a domain not aligned with From: the machine part is not processed, the mail stays readable", async () => {
    const { verdict, mail, auth } = await receive(await quoteMail({ dkimKey: buyer.dkim }));
    expect(auth.authenticatedFrom).toBeUndefined();
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_MAIL_AUTH", refused: false });
    expect(verdict.reason).toMatch(/not aligned with agent@seller\.example/);
    expect(mail.text).toContain("Total: 1800.00 EUR");
  });

  it("a body changed after DKIM signing fails DKIM", async () => {
    const raw = (await quoteMail()).toString("latin1").replace("Total: 1800.00 EUR", "Total: 1.00 EUR");
    const { verdict } = await receive(Buffer.from(raw, "latin1"));
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_MAIL_AUTH" });
  });

  it("from.address that is not the From address is not processed", async () => {
    // The seller's server signs a mail whose From is another address of the same domain.
    const edit = (raw: string) =>
      raw.replace(/^(From: .*)<agent@seller\.example>/m, "$1<billing@seller.example>");
    const { verdict, auth } = await receive(await quoteMail({ edit }));
    expect(auth.authenticatedFrom).toBe("billing@seller.example");
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_WRONG_SENDER" });
  });

  it("to.address that is not the receiving inbox is refused", async () => {
    const message = quote(seller, buyer, NOW, ask);
    const elsewhere = { ...message, to: { address: "someone@buyer.example" } } as Message;
    const raw = await quoteMail({ message: elsewhere });
    const { verdict } = await receive(raw);
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_WRONG_RECIPIENT", refused: true });
  });

  it("a part that does not validate against the schema is treated as plain mail", async () => {
    const message = {
      ...quote(seller, buyer, NOW, ask),
      total: { amount: "18.00", currency: "EUR" },
    } as Message;
    const { verdict, mail } = await receive(await quoteMail({ message, sign: false }));
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_MESSAGE_INVALID", refused: false });
    expect(mail.html).toContain("<h1>Quote</h1>");
  });

  it("a part over 32 KB is treated as plain mail", async () => {
    // Capped strings keep a valid message small, so the sender's part is padded with JSON whitespace.
    const edit = (raw: string) =>
      raw.replace(
        /(Content-Purpose: Machine-readable\r\nContent-Disposition: inline\r\nContent-Transfer-Encoding: base64\r\n\r\n)/,
        `$1${Buffer.from(" ".repeat(33 * 1024))
          .toString("base64")
          .replace(/(.{76})/g, "$1\r\n")}\r\n`,
      );
    const { verdict, auth } = await receive(await quoteMail({ sign: false, edit }));
    expect(auth.authenticatedFrom).toBe(seller.address);
    expect(verdict).toMatchObject({
      result: "could_not_check",
      code: "ERR_MESSAGE_TOO_LARGE",
      refused: false,
    });
  });

  it("the same sender's nonce seen twice is a replay and refused", async () => {
    const raw = await quoteMail();
    const state = memoryState({ [ask.message.id]: ask.hash });
    expect((await receive(raw, state)).verdict.result).toBe("signed_and_checked");
    expect((await receive(raw, state)).verdict).toMatchObject({ code: "ERR_REPLAY", refused: true });
  });

  it("an expired message is refused", async () => {
    const { verdict } = await receive(await quoteMail(), undefined, NOW + 3_600);
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_EXPIRED", refused: true });
  });

  it("prev that does not match the stored message it answers is refused", async () => {
    const { verdict } = await receive(await quoteMail(), memoryState({ [ask.message.id]: "0".repeat(64) }));
    expect(verdict).toMatchObject({ code: "ERR_PREV_MISMATCH", refused: true });
    const unknown = await receive(await quoteMail(), memoryState());
    expect(unknown.verdict.reason).toMatch(/is not stored here/);
  });

  it("a term changed in the machine part after signing (DKIM re-applied) no longer matches its JWS", async () => {
    const message = quote(seller, buyer, NOW, ask);
    const signed = await signMessage(message, seller.key, { jku: seller.jku });
    const changed = { ...message, total: { amount: "100", currency: "EUR" } } as Message;
    const raw = await dkimSignMail(
      await composeAgreementMail({ message: changed, jws: signed.jws }),
      seller.dkim,
    );
    const { verdict } = await receive(raw);
    expect(verdict).toMatchObject({ result: "could_not_check", code: "ERR_JWS_MISMATCH", refused: true });
  });

  it("a signature whose key page is not on the trusted host is not trusted: mail checks only", async () => {
    const message = quote(seller, buyer, NOW, ask);
    const signed = await signMessage(message, seller.key, {
      jku: `https://keys.seller.example/.well-known/agent-agreements/${seller.party}.json`,
    });
    const raw = await dkimSignMail(await composeAgreementMail({ message, jws: signed.jws }), seller.dkim);
    const { verdict } = await receive(raw);
    expect(verdict).toMatchObject({ result: "mail_checks_only", code: "ERR_SIGNATURE_UNTRUSTED" });
    expect(verdict.warnings.join(" ")).toMatch(/not trusted/);
  });
});
