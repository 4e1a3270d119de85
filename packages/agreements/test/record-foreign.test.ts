// A record another implementation could write (issue 18): made by hand from the profile's text
// ("The agreement record") with node:crypto alone, not with createRecord, without Doorbell's
// sealed_at and with a member the profile does not define. It checks out, with both said.
import { createHash, createPrivateKey, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkRecord, staticKeyPages } from "../src/index.js";
import {
  accept,
  BUYER,
  jkuOf,
  quote,
  readVector,
  SELLER,
  type TestKeyName,
  testPrivateJwk,
} from "./support.js";

// RFC 8785 for the plain data here (strings, whole numbers, booleans, arrays, objects), written
// out independently of the package's own canonicaliser.
const jcs = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
};
const b64 = (text: string) => Buffer.from(text).toString("base64url");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const thumbprint = (x: string) =>
  createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");

/** A compact JWS with {alg, kid, jku, typ}, signed with a test key through node:crypto. */
const jws = (payload: string, name: TestKeyName, party: string, typ: string) => {
  const jwk = testPrivateJwk(name);
  const header = b64(JSON.stringify({ typ, alg: "EdDSA", jku: jkuOf(party), kid: thumbprint(jwk.x) }));
  const input = `${header}.${b64(payload)}`;
  const key = createPrivateKey({ key: { ...jwk }, format: "jwk" });
  return `${input}.${sign(null, Buffer.from(input), key).toString("base64url")}`;
};

const handWritten = () => {
  const offerJson = jcs(quote());
  const offerHash = sha256(offerJson);
  const acceptJson = jcs(accept(offerHash));
  const acceptHash = sha256(acceptJson);
  const offer = quote() as unknown as Record<string, unknown>;
  const record: Record<string, unknown> = {
    profile: "agent-agreement/1",
    id: "5e0c1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b",
    thread: offer.thread,
    kind: "two_signatures",
    parties: [
      {
        role: "offerer",
        party: SELLER.party,
        address: SELLER.address,
        org_name: SELLER.org,
        kid: thumbprint(testPrivateJwk("seller").x),
      },
      {
        role: "accepter",
        party: BUYER.party,
        address: BUYER.address,
        org_name: BUYER.org,
        kid: thumbprint(testPrivateJwk("buyer").x),
        authority: { decided_by: "limits", limits_version: "3" },
      },
    ],
    offer: { jws: jws(offerJson, "seller", SELLER.party, "agent-intent+jws"), hash: offerHash },
    acceptance: { jws: jws(acceptJson, "buyer", BUYER.party, "agent-intent+jws"), hash: acceptHash },
    terms: { items: offer.items, total: offer.total, delivery_by: offer.delivery_by },
    agreed_at: (accept(offerHash) as unknown as { iat: number }).iat,
    chain: [offerHash, acceptHash],
    offer_current: true,
    x_vendor_reference: "PO-2026-0042",
  };
  // "seal: a JWS with typ agent-agreement+jws over the canonical record without the seal".
  return { ...record, seal: jws(jcs(record), "seller", SELLER.party, "agent-agreement+jws") };
};

const options = async () => ({
  trustedOrigins: ["https://api.stackshift.cloud"],
  source: await staticKeyPages([readVector("key-pages/seller.json"), readVector("key-pages/buyer.json")]),
  txt: async () => [],
});

describe("a record written by another implementation", () => {
  it("checks out without sealed_at and with a member the profile does not define, saying both", async () => {
    const record = handWritten();
    expect(record).not.toHaveProperty("sealed_at");
    const checked = await checkRecord(JSON.stringify(record, null, 2), await options());
    expect(checked.ok ? "" : checked.reason).toBe("");
    expect(checked).toMatchObject({ ok: true, result: "two_signatures" });
    expect(checked.ok && checked.warnings).toEqual([
      expect.stringMatching(/members this profile does not define \(\/x_vendor_reference\)/),
      expect.stringMatching(/does not say when it was sealed/),
    ]);
  });

  it("a kid in the party entry of a side that did not sign is not a reason to refuse (issue 30 item 8)", async () => {
    // agent-agreement/1 lists a kid for each party. In the buyer's our_signature record the
    // seller's offer is kept unsigned (its canonical JSON); the seller's kid there is the key that
    // side publishes, which nothing binds to a signature, and the result says one signature.
    const { seal: _seal, ...base } = handWritten();
    const offerJson = jcs(quote());
    const unsealedRecord = {
      ...base,
      kind: "our_signature",
      offer: { json: offerJson, hash: sha256(offerJson) },
    };
    const record = {
      ...unsealedRecord,
      seal: jws(jcs(unsealedRecord), "buyer", BUYER.party, "agent-agreement+jws"),
    };
    const checked = await checkRecord(JSON.stringify(record), await options());
    expect(checked.ok ? "" : checked.reason).toBe("");
    expect(checked).toMatchObject({ ok: true, result: "one_signature" });
  });

  it("still refuses it when the unknown member is changed after sealing", async () => {
    const record = { ...handWritten(), x_vendor_reference: "PO-2026-0043" };
    const checked = await checkRecord(JSON.stringify(record), await options());
    expect(checked).toMatchObject({ ok: false, code: "ERR_RECORD_SEAL", step: 1 });
  });
});
