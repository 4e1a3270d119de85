import { describe, expect, it } from "vitest";
import {
  createStandardSigner,
  createStandardVerifier,
  generateSecret,
  type WebhookError,
} from "../src/index.js";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const timestamp = 1614265330;
const body = '{"test": 2432232314}';
const valid = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const verifier = createStandardVerifier({ secrets: [secret], clock: () => timestamp * 1000 });

function headersWith(overrides: Record<string, string | string[] | undefined>) {
  const base: Record<string, string | string[] | undefined> = {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": valid,
  };
  return { ...base, ...overrides };
}

function failure(headers: Record<string, string | string[] | undefined> | Headers, payload: string = body) {
  try {
    verifier.verify(headers, payload);
  } catch (error) {
    return error as WebhookError;
  }
  throw new Error("expected the webhook to be refused");
}

describe("refusals, each with the code and a plain reason", () => {
  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("missing %s", (name) => {
    const error = failure(headersWith({ [name]: undefined }));
    expect(error.code).toBe("ERR_WEBHOOK_MISSING_HEADER");
    expect(error.message).toBe(`the ${name} header is missing`);
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("empty %s", (name) => {
    expect(failure(headersWith({ [name]: "" })).code).toBe("ERR_WEBHOOK_MISSING_HEADER");
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("duplicate %s as an array", (name) => {
    const value = headersWith({})[name] as string;
    expect(failure(headersWith({ [name]: [value, value] })).code).toBe("ERR_WEBHOOK_DUPLICATE_HEADER");
  });

  it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])(
    "duplicate %s joined by fetch Headers",
    (name) => {
      const headers = new Headers(headersWith({}) as Record<string, string>);
      headers.append(name, headers.get(name) as string);
      expect(failure(headers).code).toBe("ERR_WEBHOOK_DUPLICATE_HEADER");
    },
  );

  it.each([
    "1614265330abc",
    "-1614265330",
    "+1614265330",
    "1614265330.5",
    "1.6e9",
    " 1614265330",
    "0x60382a72",
    "a",
    "1234567890123",
  ])("timestamp %j is not whole seconds", (value) => {
    const error = failure(headersWith({ "webhook-timestamp": value }));
    expect(error.code).toBe("ERR_WEBHOOK_INVALID_TIMESTAMP");
    expect(error.message).toContain("whole Unix seconds");
  });

  it("too old by more than 300 s, with the number of seconds", () => {
    const error = failure(headersWith({ "webhook-timestamp": String(timestamp - 301) }));
    expect(error.code).toBe("ERR_WEBHOOK_TIMESTAMP_TOO_OLD");
    expect(error.message).toContain("301 s older");
  });

  it("too new by more than 300 s", () => {
    const error = failure(headersWith({ "webhook-timestamp": String(timestamp + 301) }));
    expect(error.code).toBe("ERR_WEBHOOK_TIMESTAMP_TOO_NEW");
    expect(error.message).toContain("301 s ahead");
  });

  it("exactly 300 s either way is inside the window (the signature then decides)", () => {
    for (const skew of [-300, 300]) {
      const error = failure(headersWith({ "webhook-timestamp": String(timestamp + skew) }));
      expect(error.code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
    }
  });

  it("a configurable tolerance", () => {
    const strict = createStandardVerifier({
      secrets: [secret],
      toleranceSeconds: 5,
      clock: () => (timestamp + 6) * 1000,
    });
    expect(() => strict.verify(headersWith({}), body)).toThrow(/6 s older/);
  });

  it("empty v1 signature", () => {
    const error = failure(headersWith({ "webhook-signature": "v1," }));
    expect(error.code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
    expect(error.details[0]).toContain("not a base64 HMAC-SHA256");
  });

  it("truncated signature", () => {
    const error = failure(headersWith({ "webhook-signature": valid.slice(0, 8) }));
    expect(error.code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
  });

  it("a valid signature under an unknown version does not verify", () => {
    const error = failure(headersWith({ "webhook-signature": valid.replace("v1,", "v2,") }));
    expect(error.code).toBe("ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE");
    expect(error.details[0]).toContain("ignored");
  });

  it("a token without a comma is ignored, not a crash", () => {
    expect(failure(headersWith({ "webhook-signature": "garbage" })).code).toBe(
      "ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE",
    );
  });

  it("several signatures (invalid v1, v2, valid, invalid) verify", () => {
    const bad = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
    const header = `${bad} v2,${valid.slice(3)} ${valid} ${bad}`;
    expect(verifier.verify(headersWith({ "webhook-signature": header }), body).version).toBe("v1");
  });

  it("mixed-case header names", () => {
    const headers = { "Webhook-Id": id, "WEBHOOK-TIMESTAMP": String(timestamp), "Webhook-Signature": valid };
    expect(verifier.verify(headers, body).id).toBe(id);
  });

  it("a fetch Headers object", () => {
    expect(verifier.verify(new Headers(headersWith({}) as Record<string, string>), body).id).toBe(id);
  });

  it("the wrong secret names each signature that failed", () => {
    const other = createStandardVerifier({ secrets: [generateSecret()], clock: () => timestamp * 1000 });
    try {
      other.verify(headersWith({}), body);
      expect.unreachable();
    } catch (error) {
      expect((error as WebhookError).code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
      expect((error as WebhookError).details).toEqual([
        "signature 1 (v1): does not match any of the 1 secret(s)",
      ]);
    }
  });

  it("a modified body", () => {
    expect(failure(headersWith({}), '{"test": 2432232315}').code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
  });

  it("an id with spaces or control characters", () => {
    expect(failure(headersWith({ "webhook-id": "msg id" })).code).toBe("ERR_WEBHOOK_INVALID_ID");
    expect(failure(headersWith({ "webhook-id": "x".repeat(257) })).code).toBe("ERR_WEBHOOK_INVALID_ID");
  });

  it.each([
    ["", /not whsec_/],
    ["whsec_", /not whsec_/],
    ["whsec_!!!!", /not whsec_/],
    ["whsec_dG9vIHNob3J0", /decodes to 9 bytes/],
    [`whsec_${Buffer.alloc(65).toString("base64")}`, /decodes to 65 bytes/],
  ])("secret %j is refused", (bad, reason) => {
    expect(() => createStandardVerifier({ secrets: [bad] })).toThrow(reason);
    expect(() => createStandardSigner({ secrets: [bad] })).toThrow(reason);
  });

  it("the error never contains the secret", () => {
    const error = failure(headersWith({ "webhook-signature": "v1,AAAA" }));
    const text = JSON.stringify({ message: error.message, details: error.details });
    expect(text).not.toContain(secret.slice(6));
  });

  it("a signer refuses ids that could make the signed content ambiguous", () => {
    const signer = createStandardSigner({ secrets: [secret] });
    expect(() => signer.sign({ id: "msg.1", timestamp, body })).toThrow(/without spaces or dots/);
    expect(() => signer.sign({ id, timestamp: 1.5, body })).toThrow(/whole/);
  });
});
