import fc from "fast-check";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { createStandardSigner, createStandardVerifier, generateSecret } from "../src/index.js";

// Round trips against the two interop libraries, over random UTF-8 bodies. These libraries
// decode bodies to text, so only UTF-8 bodies can be compared (reference/webhooks.md §1.6).
const message = fc.record({
  body: fc.string({ unit: "grapheme", maxLength: 2000 }),
  id: fc.stringMatching(/^msg_[A-Za-z0-9]{1,40}$/),
  secretBytes: fc.integer({ min: 24, max: 64 }),
});
const now = Math.floor(Date.now() / 1000);

describe("interop with the standardwebhooks package", () => {
  it("its signatures verify with ours", () => {
    fc.assert(
      fc.property(message, ({ body, id, secretBytes }) => {
        const secret = generateSecret(secretBytes);
        const signature = new StandardWebhook(secret).sign(id, new Date(now * 1000), body);
        const headers = {
          "webhook-id": id,
          "webhook-timestamp": String(now),
          "webhook-signature": signature,
        };
        expect(createStandardVerifier({ secrets: [secret] }).verify(headers, body).id).toBe(id);
      }),
      { numRuns: 300 },
    );
  });

  it("our signatures verify with it", () => {
    fc.assert(
      fc.property(message, ({ body, id, secretBytes }) => {
        const secret = generateSecret(secretBytes);
        const headers = createStandardSigner({ secrets: [secret] }).headers({ id, timestamp: now, body });
        const json = JSON.stringify({ text: body });
        const jsonHeaders = createStandardSigner({ secrets: [secret] }).headers({
          id,
          timestamp: now,
          body: json,
        });
        expect(new StandardWebhook(secret).verify(json, jsonHeaders)).toEqual({ text: body });
        // Non-JSON bodies: the library throws SyntaxError only after the signature passed.
        expect(() => new StandardWebhook(secret).verify(body, headers)).not.toThrow(/signature/i);
      }),
      { numRuns: 300 },
    );
  });
});

describe("interop with the svix package", () => {
  it("its signatures verify with ours, and ours with it (svix-* headers)", () => {
    fc.assert(
      fc.property(message, ({ body, id, secretBytes }) => {
        const secret = generateSecret(secretBytes);
        const json = JSON.stringify({ text: body });
        const theirs = new SvixWebhook(secret).sign(id, new Date(now * 1000), json);
        const asStandard = {
          "webhook-id": id,
          "webhook-timestamp": String(now),
          "webhook-signature": theirs,
        };
        expect(createStandardVerifier({ secrets: [secret] }).verify(asStandard, json).version).toBe("v1");

        const ours = createStandardSigner({ secrets: [secret] }).sign({ id, timestamp: now, body: json });
        const svixHeaders = { "svix-id": id, "svix-timestamp": String(now), "svix-signature": ours };
        expect(new SvixWebhook(secret).verify(json, svixHeaders)).toEqual({ text: body });
      }),
      { numRuns: 200 },
    );
  });
});

describe("arbitrary bytes", () => {
  it("ours signs and verifies any byte string, and one flipped bit fails", () => {
    const secret = generateSecret();
    const signer = createStandardSigner({ secrets: [secret] });
    const verifier = createStandardVerifier({ secrets: [secret] });
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 4096 }), fc.nat(), (body, bit) => {
        const headers = signer.headers({ id: "msg_bytes", timestamp: now, body });
        expect(verifier.verify(headers, body).version).toBe("v1");
        const flipped = body.slice();
        const index = bit % (body.length * 8);
        flipped[index >> 3] = (flipped[index >> 3] as number) ^ (1 << (index & 7));
        expect(() => verifier.verify(headers, flipped)).toThrow(/no signature matched/);
      }),
      { numRuns: 300 },
    );
  });
});
