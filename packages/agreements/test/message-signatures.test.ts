// Signing: compact JWS, EdDSA/Ed25519 over the RFC 8785 bytes, kid = RFC 7638 thumbprint, jku, typ.
import { CompactSign, compactVerify, decodeProtectedHeader, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  createKeyResolver,
  generateSigningKey,
  importSigningKey,
  keyThumbprint,
  readSignedMessage,
  signMessage,
  staticKeyPages,
  verifyMessage,
} from "../src/index.js";
import { jkuOf, quote, readVector, SELLER, testKey, testPrivateJwk } from "./support.js";

// RFC 8037 Appendix A (A.1 key, A.3 thumbprint, A.4 signature): the RFC 8032 TEST 1 key.
const RFC8037_KEY = {
  kty: "OKP",
  crv: "Ed25519",
  d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
  x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
} as const;

const resolver = async () =>
  createKeyResolver({
    source: await staticKeyPages([readVector("key-pages/seller.json"), readVector("key-pages/buyer.json")]),
    txt: async () => [],
  });

describe("keys", () => {
  it("kid is the RFC 7638 thumbprint (RFC 8037 A.3)", async () => {
    expect(await keyThumbprint(RFC8037_KEY)).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    expect((await importSigningKey(RFC8037_KEY)).kid).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
  });

  it("signs Ed25519 as RFC 8037 A.4 does, byte for byte", async () => {
    const key = await importSigningKey(RFC8037_KEY);
    const jws = await new CompactSign(new TextEncoder().encode("Example of Ed25519 signing"))
      .setProtectedHeader({ alg: "EdDSA" })
      .sign(key.privateKey);
    expect(jws).toBe(
      "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
    );
  });

  it("refuses a private key whose x is not the public key of its d", async () => {
    const other = testPrivateJwk("buyer");
    await expect(importSigningKey({ ...RFC8037_KEY, x: other.x })).rejects.toMatchObject({
      code: "ERR_KEY_INVALID",
    });
    await expect(importSigningKey({ ...RFC8037_KEY, crv: "X25519" })).rejects.toMatchObject({
      code: "ERR_KEY_INVALID",
    });
    await expect(importSigningKey({ ...RFC8037_KEY, d: "short" })).rejects.toMatchObject({
      code: "ERR_KEY_INVALID",
    });
  });

  it("holds the private half non-extractable: it cannot be exported or serialised", async () => {
    const { signingKey, privateJwk } = await generateSigningKey();
    expect(signingKey.privateKey.extractable).toBe(false);
    expect(JSON.stringify(signingKey)).not.toContain(privateJwk.d);
    expect(signingKey.kid).toBe(await keyThumbprint(signingKey.publicJwk));
  });
});

describe("signMessage", () => {
  it("signs the canonical bytes with exactly {alg: EdDSA, kid, jku, typ: agent-intent+jws}", async () => {
    const key = await testKey("seller");
    const jku = jkuOf(SELLER.party);
    const { jws, parsed } = await signMessage(quote(), key, { jku });
    expect(decodeProtectedHeader(jws)).toEqual({ alg: "EdDSA", kid: key.kid, jku, typ: "agent-intent+jws" });
    const { payload } = await compactVerify(jws, await importJWK(key.publicJwk, "EdDSA"));
    expect(new TextDecoder().decode(payload)).toBe(canonicalJson(quote()));
    expect(parsed.canonical).toBe(canonicalJson(quote()));
  });

  it("refuses to sign a message with a member the profile does not define", async () => {
    const key = await testKey("seller");
    const extra = { ...(quote() as object), x_extra: 1 };
    await expect(signMessage(extra, key, { jku: jkuOf(SELLER.party) })).rejects.toMatchObject({
      code: "ERR_MESSAGE_INVALID",
    });
  });

  it("refuses a jku that is not a key page, or is the page of another party than from.party", async () => {
    const key = await testKey("seller");
    await expect(
      signMessage(quote(), key, { jku: "https://api.stackshift.cloud/jwks.json" }),
    ).rejects.toMatchObject({ code: "ERR_JWS_HEADER" });
    await expect(signMessage(quote(), key, { jku: jkuOf("pty_other000000000000009") })).rejects.toMatchObject(
      { code: "ERR_JWS_HEADER" },
    );
  });

  it("round-trips: what signMessage makes, verifyMessage accepts under the trust rule", async () => {
    const { jws, parsed } = await signMessage(quote(), await testKey("seller"), { jku: jkuOf(SELLER.party) });
    const verified = await verifyMessage(jws, await resolver());
    expect(verified.parsed.hash).toBe(parsed.hash);
    expect(verified.key.party).toBe(SELLER.party);
  });

  it("accepts typ written as application/agent-intent+jws in any case (RFC 7515 4.1.9)", async () => {
    const key = await testKey("seller");
    const jws = await new CompactSign(new TextEncoder().encode(canonicalJson(quote())))
      .setProtectedHeader({
        alg: "EdDSA",
        kid: key.kid,
        jku: jkuOf(SELLER.party),
        typ: "Application/Agent-Intent+JWS",
      })
      .sign(key.privateKey);
    expect(readSignedMessage(jws).parsed.message.id).toBe(quote().id);
  });

  it("an unknown member added later breaks the signature on purpose", async () => {
    const key = await testKey("seller");
    const { jws } = await signMessage(quote(), key, { jku: jkuOf(SELLER.party) });
    const [header, , signature] = jws.split(".");
    const grown = Buffer.from(canonicalJson({ ...(quote() as object), zz: 1 })).toString("base64url");
    expect(() => readSignedMessage(`${header}.${grown}.${signature}`)).toThrow(
      /members the profile does not define \(\/zz\)/,
    );
  });
});
