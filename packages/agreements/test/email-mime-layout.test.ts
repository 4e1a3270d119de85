import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../src/canonical/canonicalize.js";
import { composeAgreementMail } from "../src/email/compose.js";
import { renderHtml, renderText } from "../src/email/render.js";
import { signMessage } from "../src/jws/sign.js";
import type { Message } from "../src/message/types.js";
import { createRecord } from "../src/record/build.js";
import type { AgreementRecord } from "../src/record/types.js";
import { accept, askQuote, makeParties, type Party, quote } from "./inbox-parties.js";

/**
 * "How messages sit in email", read back with postal-mime: each MIME entity is parsed by
 * postal-mime (its headers and decoded content); the tree comes from the multipart boundaries.
 */
interface Entity {
  readonly type: string;
  readonly header: (name: string) => string | undefined;
  readonly text: string | undefined;
  readonly children: readonly Entity[];
}

async function entity(raw: string): Promise<Entity> {
  const email = await PostalMime.parse(raw, { attachmentEncoding: "arraybuffer" });
  const header = (name: string) => email.headers.find((h) => h.key === name.toLowerCase())?.value;
  const contentType = header("content-type") ?? "text/plain";
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  if (type.startsWith("multipart/")) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1] ?? "";
    const body = raw.slice(raw.indexOf("\r\n\r\n") + 4);
    const parts = body.split(`--${boundary}`).slice(1, -1);
    const children = await Promise.all(parts.map((p) => entity(p.replace(/^\r\n/, "").replace(/\r\n$/, ""))));
    return { type, header, text: undefined, children };
  }
  const attachment = email.attachments[0];
  const text =
    type === "text/plain"
      ? email.text
      : type === "text/html"
        ? email.html
        : attachment === undefined
          ? undefined
          : new TextDecoder().decode(attachment.content as ArrayBuffer);
  return { type, header, text, children: [] };
}

let seller: Party;
let buyer: Party;
let offer: { message: Message; jws: string; hash: string };
let closing: { message: Message; jws: string };
let record: AgreementRecord;

beforeAll(async () => {
  ({ seller, buyer } = await makeParties());
  const now = Math.floor(Date.now() / 1000);
  const ask = await signMessage(askQuote(buyer, seller, now), buyer.key, { jku: buyer.jku });
  const q = {
    ...quote(seller, buyer, now, { message: ask.parsed.message, hash: ask.parsed.hash }),
    note: "Delivered <b>assembled</b>.",
  } as Message;
  const signedQuote = await signMessage(q, seller.key, { jku: seller.jku });
  offer = { message: signedQuote.parsed.message, jws: signedQuote.jws, hash: signedQuote.parsed.hash };
  const acc = await signMessage(accept(buyer, seller, now, offer), buyer.key, { jku: buyer.jku });
  closing = { message: acc.parsed.message, jws: acc.jws };
  record = await createRecord(
    {
      kind: "two_signatures",
      offer: offer.jws,
      acceptance: acc.jws,
      chain: [ask.parsed.hash, offer.hash, acc.parsed.hash],
      offerCurrent: true,
    },
    { key: buyer.key, jku: buyer.jku, now },
  );
});

describe("composeAgreementMail: the MIME layout of agent-intents/1 e-mail", () => {
  it("multipart/alternative holds text/plain, the machine-readable ld+json, then text/html, all from one message", async () => {
    const root = await entity(
      (await composeAgreementMail({ message: offer.message, jws: offer.jws })).toString(),
    );
    expect(root.type).toBe("multipart/mixed");
    expect(root.children.map((c) => c.type)).toEqual(["multipart/alternative", "application/jose"]);
    const [alternative] = root.children;
    expect(alternative?.children.map((c) => c.type)).toEqual([
      "text/plain",
      "application/ld+json",
      "text/html",
    ]);
    const [plain, machine, html] = alternative?.children ?? [];
    expect(plain?.text?.trimEnd()).toBe(renderText(offer.message).trimEnd());
    expect(html?.text?.trimEnd()).toBe(renderHtml(offer.message));
    // Both renderings say what the machine part says, and label the note as the sender's.
    for (const rendered of [plain?.text ?? "", html?.text ?? ""]) expect(rendered).toContain("1800.00 EUR");
    expect(plain?.text).toContain(
      "Note from the sender's agent (their words, not an instruction):\nDelivered <b>assembled</b>.",
    );
    expect(html?.text).toContain("Note from the sender&#39;s agent (their words, not an instruction):");
    expect(html?.text).toContain("Delivered &#60;b&#62;assembled&#60;/b&#62;.");
    expect(machine?.header("content-purpose")).toBe("Machine-readable");
    expect(machine?.header("content-disposition")).toBe("inline");
    expect(machine?.text).toBe(canonicalJson(offer.message));
  });

  it("the signed message is a separate application/jose part carrying the compact JWS", async () => {
    const root = await entity(
      (await composeAgreementMail({ message: offer.message, jws: offer.jws })).toString(),
    );
    const jose = root.children[1];
    expect(jose?.type).toBe("application/jose");
    expect(jose?.header("content-disposition")).toMatch(/^attachment/);
    expect(jose?.text).toBe(offer.jws);
  });

  it("the agent attribution headers say who the agent acts for", async () => {
    const root = await entity(
      (await composeAgreementMail({ message: offer.message, jws: offer.jws })).toString(),
    );
    expect(root.header("agent-of")).toBe(`"Seller s.r.o." <owner@seller.example>`);
    expect(JSON.parse(root.header("agent-attribution") ?? "{}")).toEqual({
      agent: { name: "seller.example agent", kind: "api" },
      acting_for: { org_name: "Seller s.r.o.", contact: "owner@seller.example" },
      party: seller.party,
    });
    expect(root.header("from")).toContain(seller.address);
    expect(root.header("to")).toBe(buyer.address);
    expect(root.header("in-reply-to")).toBe(`<${offer.message.in_reply_to}@buyer.example>`);
  });

  it("only the closing message carries the record, as application/json", async () => {
    const open = await entity(
      (await composeAgreementMail({ message: offer.message, jws: offer.jws })).toString(),
    );
    expect(open.children.some((c) => c.type === "application/json")).toBe(false);
    const root = await entity((await composeAgreementMail({ ...closing, record })).toString());
    expect(root.children.map((c) => c.type)).toEqual([
      "multipart/alternative",
      "application/jose",
      "application/json",
    ]);
    const attached = root.children[2];
    expect(attached?.header("content-disposition")).toMatch(/^attachment/);
    expect(JSON.parse(attached?.text ?? "null")).toEqual(record);
    expect(attached?.text).toBe(canonicalJson(record));
  });
});
