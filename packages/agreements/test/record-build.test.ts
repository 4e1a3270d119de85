// Building and sealing records: terms, parties and agreed_at are derived from the messages, the
// seal covers the canonical record without the seal, and a record that would not check out
// (late accept, replaced offer, wrong sealer, missing parts) is refused instead of being made.
import { decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import {
  buildRecord,
  canonicalJson,
  createRecord,
  parseMessageValue,
  RECORD_PROFILE,
  signMessage,
  unsealed,
  verifyCompactSignature,
} from "../src/index.js";
import { accept, BUYER, jkuOf, quote, SELLER, T0, testKey } from "./support.js";

const setup = async () => {
  const seller = await testKey("seller");
  const buyer = await testKey("buyer");
  const offer = await signMessage(quote(), seller, { jku: jkuOf(SELLER.party) });
  const acceptance = await signMessage(accept(offer.parsed.hash), buyer, { jku: jkuOf(BUYER.party) });
  const chain = [offer.parsed.hash, acceptance.parsed.hash];
  return { seller, buyer, offer, acceptance, chain };
};

describe("records", () => {
  it("derives terms, parties and agreed_at from the signed messages", async () => {
    const { seller, offer, acceptance, chain } = await setup();
    const record = await createRecord(
      { kind: "two_signatures", offer: offer.jws, acceptance: acceptance.jws, chain, offerCurrent: true },
      { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
    );
    expect(record.profile).toBe(RECORD_PROFILE);
    expect(record.terms).toEqual({
      items: [
        {
          description: "Oak desk, 160 × 80 cm",
          quantity: 2,
          unit: "piece",
          unit_price: { amount: "45000", currency: "EUR" },
        },
      ],
      total: { amount: "90000", currency: "EUR" },
      delivery_by: "2026-02-10",
    });
    expect(record.parties).toEqual([
      {
        role: "offerer",
        party: SELLER.party,
        address: SELLER.address,
        org_name: SELLER.org,
        kid: seller.kid,
      },
      {
        role: "accepter",
        party: BUYER.party,
        address: BUYER.address,
        org_name: BUYER.org,
        kid: (await testKey("buyer")).kid,
        authority: { decided_by: "limits", limits_version: "3" },
      },
    ]);
    expect(record.agreed_at).toBe(T0 + 7200);
    expect(record.offer).toEqual({ jws: offer.jws, hash: offer.parsed.hash });
  });

  it("seals the canonical record without the seal, typ agent-agreement+jws, with the holder's key", async () => {
    const { seller, offer, acceptance, chain } = await setup();
    const record = await createRecord(
      { kind: "two_signatures", offer: offer.jws, acceptance: acceptance.jws, chain, offerCurrent: true },
      { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
    );
    expect(decodeProtectedHeader(record.seal)).toEqual({
      alg: "EdDSA",
      kid: seller.kid,
      jku: jkuOf(SELLER.party),
      typ: "agent-agreement+jws",
    });
    const payload = Buffer.from(record.seal.split(".")[1] as string, "base64url").toString("utf8");
    expect(payload).toBe(canonicalJson(unsealed(record)));
    await expect(verifyCompactSignature(record.seal, seller.publicJwk)).resolves.toBeUndefined();
  });

  it("refuses to make a record of a late accept or of a replaced offer", async () => {
    const { seller, buyer, offer, chain } = await setup();
    const late = await signMessage(
      accept(offer.parsed.hash, { iat: offer.parsed.message.exp + 1, exp: offer.parsed.message.exp + 99 }),
      buyer,
      { jku: jkuOf(BUYER.party) },
    );
    await expect(
      createRecord(
        {
          kind: "two_signatures",
          offer: offer.jws,
          acceptance: late.jws,
          chain: [offer.parsed.hash, late.parsed.hash],
          offerCurrent: true,
        },
        { key: seller, jku: jkuOf(SELLER.party), now: T0 + 9 * 86_400 },
      ),
    ).rejects.toMatchObject({ code: "ERR_OFFER_EXPIRED" });
    const { acceptance } = await setup();
    await expect(
      createRecord(
        { kind: "two_signatures", offer: offer.jws, acceptance: acceptance.jws, chain, offerCurrent: false },
        { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
      ),
    ).rejects.toMatchObject({ code: "ERR_OFFER_REPLACED" });
  });

  it("our_signature holds the unsigned offer as canonical JSON and is sealed by the accepter only", async () => {
    const { seller, buyer, acceptance, chain } = await setup();
    const unsigned = parseMessageValue(quote());
    const record = await createRecord(
      { kind: "our_signature", offer: unsigned, acceptance: acceptance.jws, chain, offerCurrent: true },
      { key: buyer, jku: jkuOf(BUYER.party), now: T0 + 8000 },
    );
    expect(record.offer).toEqual({ json: unsigned.canonical, hash: unsigned.hash });
    expect(record.parties[0].kid).toBeUndefined();
    await expect(
      createRecord(
        { kind: "our_signature", offer: unsigned, acceptance: acceptance.jws, chain, offerCurrent: true },
        { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
      ),
    ).rejects.toMatchObject({ code: "ERR_RECORD_SEAL" });
  });

  it("their_reply has a reply and no acceptance; two_signatures needs the acceptance", async () => {
    const { seller, offer } = await setup();
    const reply = {
      hash: "a".repeat(64),
      authentication_results: "mx; dkim=pass header.d=buyer.example",
      received_at: T0 + 7000,
      org_name: BUYER.org,
    };
    const record = await createRecord(
      {
        kind: "their_reply",
        offer: offer.jws,
        reply,
        chain: [offer.parsed.hash, reply.hash],
        offerCurrent: true,
      },
      { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
    );
    expect(record.acceptance).toBeUndefined();
    expect(record.reply).toEqual({
      hash: reply.hash,
      authentication_results: reply.authentication_results,
      received_at: T0 + 7000,
    });
    expect(() =>
      buildRecord({
        kind: "two_signatures",
        offer: offer.jws,
        chain: [offer.parsed.hash],
        offerCurrent: true,
      }),
    ).toThrow(/needs the signed acceptance/);
  });

  it("refuses a chain that does not end with the acceptance", async () => {
    const { seller, offer, acceptance } = await setup();
    await expect(
      createRecord(
        {
          kind: "two_signatures",
          offer: offer.jws,
          acceptance: acceptance.jws,
          chain: [acceptance.parsed.hash, offer.parsed.hash],
          offerCurrent: true,
        },
        { key: seller, jku: jkuOf(SELLER.party), now: T0 + 8000 },
      ),
    ).rejects.toMatchObject({ code: "ERR_RECORD_CHAIN" });
  });
});
