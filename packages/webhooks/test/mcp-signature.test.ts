import { describe, expect, it } from "vitest";
import { createMcpSigner, createMcpVerifier, type WebhookError } from "../src/index.js";

// MCP Events sketch "Replay attack prevention": HMAC-SHA256 keyed with the literal whsec_ string,
// over `timestamp.body`, lowercase hex. Expected value computed independently with Python's hmac.
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const timestamp = 1739980800;
const body = '{"id":"f47ac10b-58cc-4372-a567-0e02b2c3d479","eventId":"evt_789"}';
const expected = "sha256=f3127c82926da2cb8a205642d50f3a63f710d5e4ab613ab2642c95bbf9ffb856";
const subscriptionId = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
const clock = () => timestamp * 1000;

describe("MCP Events sketch signatures", () => {
  it("signs the vector with the literal whsec_ string as key", () => {
    const headers = createMcpSigner(secret).headers({ subscriptionId, timestamp, body });
    expect(headers).toEqual({
      "x-mcp-signature": expected,
      "x-mcp-timestamp": String(timestamp),
      "x-mcp-subscription-id": subscriptionId,
    });
  });

  it("verifies it, with headers in any case", () => {
    const verifier = createMcpVerifier({ secrets: [secret], clock });
    const headers = {
      "X-MCP-Signature": expected,
      "X-MCP-Timestamp": String(timestamp),
      "X-MCP-Subscription-Id": subscriptionId,
    };
    expect(verifier.verify(headers, body)).toEqual({ subscriptionId, timestamp });
  });

  const refuse = (headers: Record<string, string | undefined>, payload = body): WebhookError => {
    const verifier = createMcpVerifier({ secrets: [secret], clock });
    try {
      verifier.verify(headers, payload);
    } catch (error) {
      return error as WebhookError;
    }
    throw new Error("expected a refusal");
  };
  const good = {
    "x-mcp-signature": expected,
    "x-mcp-timestamp": String(timestamp),
    "x-mcp-subscription-id": subscriptionId,
  };

  it.each(["x-mcp-signature", "x-mcp-timestamp", "x-mcp-subscription-id"])("missing %s", (name) => {
    expect(refuse({ ...good, [name]: undefined }).code).toBe("ERR_WEBHOOK_MISSING_HEADER");
  });

  it.each([`sha256=${"F".repeat(64)}`, "sha1=abcd", expected.slice(7), `${expected}00`])(
    "malformed signature %j",
    (value) => {
      expect(refuse({ ...good, "x-mcp-signature": value }).code).toBe("ERR_WEBHOOK_NO_SUPPORTED_SIGNATURE");
    },
  );

  it("a changed body or timestamp fails", () => {
    expect(refuse(good, `${body} `).code).toBe("ERR_WEBHOOK_SIGNATURE_MISMATCH");
    expect(refuse({ ...good, "x-mcp-timestamp": String(timestamp - 1) }).code).toBe(
      "ERR_WEBHOOK_SIGNATURE_MISMATCH",
    );
  });

  it("older than 5 minutes fails", () => {
    const verifier = createMcpVerifier({ secrets: [secret], clock: () => (timestamp + 301) * 1000 });
    expect(() => verifier.verify(good, body)).toThrow(/301 s older/);
  });

  it("a rotated secret still verifies during the overlap", () => {
    const verifier = createMcpVerifier({
      secrets: ["whsec_dGhpcyBpcyBhIHNlY29uZCB0ZXN0IHNlY3JldCE=", secret],
      clock,
    });
    expect(verifier.verify(good, body).subscriptionId).toBe(subscriptionId);
  });

  it("an unprefixed secret is refused: the key is the literal whsec_ string", () => {
    expect(() => createMcpSigner(secret.slice(6))).toThrow(/full whsec_/);
  });
});
