// vectors/signed-messages.json: a signed message counts only when its header is exactly right, its
// payload is the canonical form of the parsed message, its key comes from a trusted key page that
// lists the sender, and the Ed25519 signature verifies.
import { describe, expect, it } from "vitest";
import { createKeyResolver, readSignedMessage, staticKeyPages, verifyMessage } from "../src/index.js";
import { readVector } from "./support.js";

interface SignedVectors {
  trusted_origins: string[];
  key_pages: string[];
  valid: { name: string; jws: string; hash: string; kid: string }[];
  invalid: { name: string; jws: string; code: string }[];
}
const v = readVector<SignedVectors>("signed-messages.json");
const resolver = async () =>
  createKeyResolver({
    trustedOrigins: v.trusted_origins,
    source: await staticKeyPages(v.key_pages.map((path) => readVector(path))),
    txt: async () => [],
  });

describe("signed message vectors", () => {
  it.each(v.valid)("valid: $name", async ({ jws, hash, kid }) => {
    const verified = await verifyMessage(jws, await resolver());
    expect(verified.parsed.hash).toBe(hash);
    expect(verified.header).toMatchObject({ alg: "EdDSA", kid, typ: "agent-intent+jws" });
    expect(verified.key.vouchedBy).toBe("address");
  });

  it.each(v.invalid)("refused ($code): $name", async ({ jws, code }) => {
    await expect(verifyMessage(jws, await resolver())).rejects.toMatchObject({ code });
  });

  it("refuses form problems before any key page is asked for", async () => {
    let asked = 0;
    const counting = createKeyResolver({
      trustedOrigins: v.trusted_origins,
      source: async () => {
        asked += 1;
        throw new Error("not expected");
      },
    });
    for (const { jws, code } of v.invalid.filter((x) =>
      ["ERR_NOT_CANONICAL", "ERR_JWS_HEADER", "ERR_JWS_INVALID"].includes(x.code),
    )) {
      expect(() => readSignedMessage(jws)).toThrow(expect.objectContaining({ code }));
      await expect(verifyMessage(jws, counting)).rejects.toMatchObject({ code });
    }
    expect(asked).toBe(0);
  });
});
