import { describe, expect, it } from "vitest";
import {
  createStandardSigner,
  createStandardVerifier,
  generateSigningKeyPair,
  publicKeyOf,
} from "../src/index.js";

// Vector A: the v1 vector shared by every Standard Webhooks reference library's tests
// (standard-webhooks/standard-webhooks, libraries/*; also Svix server worker.rs).
const A = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const atVectorTime = () => A.timestamp * 1000;

// RFC 8032 §7.1 TEST 1 key pair; the v1a signature over vector A's content was computed
// independently with Python `cryptography` (Ed25519PrivateKey.from_private_bytes(seed).sign).
const RFC8032_SEED = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
const RFC8032_PUBLIC = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex");
const V1A_SIGNATURE =
  "v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPePmPsle0zV9jSeGlHFG2NVAw==";
const seedKey = `whsk_${RFC8032_SEED.toString("base64")}`;
const seedAndPublicKey = `whsk_${Buffer.concat([RFC8032_SEED, RFC8032_PUBLIC]).toString("base64")}`;
const publicKey = `whpk_${RFC8032_PUBLIC.toString("base64")}`;

// Non-UTF-8 body ff fe 00 under vector A's secret, id and timestamp; computed with Python hmac.
const BINARY_SIGNATURE = "v1,3jg4eW7u8bRdDDGq2uq+cH74GMn0QRxtzvZDV5Akycg=";

describe("Standard Webhooks v1", () => {
  it("signs the shared vector A exactly", () => {
    expect(createStandardSigner({ secrets: [A.secret] }).sign(A)).toBe(A.signature);
  });

  it("verifies the shared vector A", () => {
    const verifier = createStandardVerifier({ secrets: [A.secret], clock: atVectorTime });
    const headers = {
      "webhook-id": A.id,
      "webhook-timestamp": String(A.timestamp),
      "webhook-signature": A.signature,
    };
    expect(verifier.verify(headers, A.body)).toEqual({ id: A.id, timestamp: A.timestamp, version: "v1" });
  });

  it("accepts the secret with and without the whsec_ prefix", () => {
    const unprefixed = A.secret.slice("whsec_".length);
    expect(createStandardSigner({ secrets: [unprefixed] }).sign(A)).toBe(A.signature);
  });

  it("signs and verifies a non-UTF-8 body byte for byte", () => {
    const body = new Uint8Array([0xff, 0xfe, 0x00]);
    const signature = createStandardSigner({ secrets: [A.secret] }).sign({ ...A, body });
    expect(signature).toBe(BINARY_SIGNATURE);
    const verifier = createStandardVerifier({ secrets: [A.secret], clock: atVectorTime });
    const headers = {
      "webhook-id": A.id,
      "webhook-timestamp": String(A.timestamp),
      "webhook-signature": signature,
    };
    expect(verifier.verify(headers, body).version).toBe("v1");
    // A body decoded to text and back (U+FFFD) is a different body and must not verify.
    const mangled = new TextEncoder().encode(new TextDecoder().decode(body));
    expect(() => verifier.verify(headers, mangled)).toThrow(/no signature matched/);
  });

  it("signs with every secret during a rotation, and either secret verifies", () => {
    const next = "whsec_dGhpcyBpcyBhIHNlY29uZCB0ZXN0IHNlY3JldCE=";
    const signature = createStandardSigner({ secrets: [next, A.secret] }).sign(A);
    expect(signature.split(" ")).toHaveLength(2);
    expect(signature.split(" ")[1]).toBe(A.signature);
    for (const secret of [next, A.secret]) {
      const verifier = createStandardVerifier({ secrets: [secret], clock: atVectorTime });
      const headers = {
        "webhook-id": A.id,
        "webhook-timestamp": String(A.timestamp),
        "webhook-signature": signature,
      };
      expect(verifier.verify(headers, A.body).version).toBe("v1");
    }
  });
});

describe("Standard Webhooks v1a (Ed25519)", () => {
  it("signs the pinned vector with the 32-byte seed form and the 64-byte seed‖public form", () => {
    for (const key of [seedKey, seedAndPublicKey]) {
      expect(createStandardSigner({ signingKeys: [key] }).sign(A)).toBe(V1A_SIGNATURE);
    }
  });

  it("derives the RFC 8032 public key from the seed", () => {
    expect(publicKeyOf(seedKey)).toBe(publicKey);
  });

  it("refuses a 64-byte key whose public half belongs to another seed", () => {
    const wrong = `whsk_${Buffer.concat([RFC8032_SEED, Buffer.alloc(32, 7)]).toString("base64")}`;
    expect(() => createStandardSigner({ signingKeys: [wrong] })).toThrow(/does not belong to its seed/);
  });

  it("verifies v1a alone, and v1 beside v1a", () => {
    const headers = (signature: string) => ({
      "webhook-id": A.id,
      "webhook-timestamp": String(A.timestamp),
      "webhook-signature": signature,
    });
    const edOnly = createStandardVerifier({ publicKeys: [publicKey], clock: atVectorTime });
    expect(edOnly.verify(headers(V1A_SIGNATURE), A.body).version).toBe("v1a");
    const both = createStandardSigner({ secrets: [A.secret], signingKeys: [seedKey] }).sign(A);
    expect(both).toBe(`${A.signature} ${V1A_SIGNATURE}`);
    const hmacOnly = createStandardVerifier({ secrets: [A.secret], clock: atVectorTime });
    expect(hmacOnly.verify(headers(both), A.body).version).toBe("v1");
    expect(edOnly.verify(headers(both), A.body).version).toBe("v1a");
  });

  it("generates pairs whose signatures verify", () => {
    const pair = generateSigningKeyPair();
    expect(publicKeyOf(pair.signingKey)).toBe(pair.publicKey);
    const signature = createStandardSigner({ signingKeys: [pair.signingKey] }).sign(A);
    const verifier = createStandardVerifier({ publicKeys: [pair.publicKey], clock: atVectorTime });
    const headers = {
      "webhook-id": A.id,
      "webhook-timestamp": String(A.timestamp),
      "webhook-signature": signature,
    };
    expect(verifier.verify(headers, A.body).version).toBe("v1a");
  });
});
