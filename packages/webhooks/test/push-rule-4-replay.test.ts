import { describe, expect, it } from "vitest";
import { createReceiver, createStandardSigner, generateSecret, type ReceivedWebhook } from "../src/index.js";

// Push profile §6 rule 4: reject a timestamp more than 300 s off, a signature that does not
// verify, or a webhook-id already processed in the last 10 minutes; idempotent by webhook-id.
const secret = generateSecret();
const signer = createStandardSigner({ secrets: [secret] });
const start = 1_800_000_000_000;

function setup(handler: (event: ReceivedWebhook) => void | Promise<void> = () => {}) {
  let now = start;
  const seen: string[] = [];
  const receiver = createReceiver({
    keys: { secrets: [secret] },
    clock: () => now,
    handler: async (event) => {
      seen.push(event.id);
      await handler(event);
    },
  });
  const post = (id: string, body = '{"type":"intent.matches.delivered"}', at = Math.floor(now / 1000)) =>
    receiver(
      new Request("http://agent.test/hook", {
        method: "POST",
        headers: { "content-type": "application/json", ...signer.headers({ id, timestamp: at, body }) },
        body,
      }),
    );
  return { post, seen, advance: (ms: number) => (now += ms) };
}

describe("push profile §6 rule 4", () => {
  it("processes an id once; a retry within 10 minutes gets 2xx without running the handler again", async () => {
    const { post, seen, advance } = setup();
    expect((await post("msg_1")).status).toBe(200);
    advance(9 * 60_000);
    const again = await post("msg_1");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: "duplicate", id: "msg_1" });
    expect(seen).toEqual(["msg_1"]);
  });

  it("forgets the id after the 10-minute window", async () => {
    const { post, seen, advance } = setup();
    await post("msg_1");
    advance(10 * 60_000 + 1);
    expect((await post("msg_1")).status).toBe(200);
    expect(seen).toEqual(["msg_1", "msg_1"]);
  });

  it("refuses a timestamp 301 s old and 301 s ahead with 401", async () => {
    const { post, seen } = setup();
    const at = Math.floor(start / 1000);
    for (const skew of [-301, 301]) {
      const response = await post(`msg_${skew}`, "{}", at + skew);
      expect(response.status).toBe(401);
      expect((await response.json()).error).toMatch(/TIMESTAMP_TOO_(OLD|NEW)/);
    }
    expect(seen).toEqual([]);
  });

  it("refuses a signature that does not verify with 401 and does not run the handler", async () => {
    const { seen } = setup();
    const receiver = createReceiver({
      keys: { secrets: [generateSecret()] },
      clock: () => start,
      handler: () => {},
    });
    const body = "{}";
    const response = await receiver(
      new Request("http://agent.test/hook", {
        method: "POST",
        headers: signer.headers({ id: "msg_x", timestamp: start / 1000, body }),
        body,
      }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "ERR_WEBHOOK_SIGNATURE_MISMATCH" });
    expect(seen).toEqual([]);
  });

  it("runs the handler at most once when the same id arrives concurrently", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { post, seen } = setup(() => gate);
    const first = post("msg_c");
    const second = await post("msg_c");
    expect(second.status).toBe(409);
    expect(second.headers.get("retry-after")).toBe("5");
    release();
    expect((await first).status).toBe(200);
    expect((await post("msg_c")).status).toBe(200);
    expect(seen).toEqual(["msg_c"]);
  });

  it("answers 2xx only after the handler succeeded; a failed handler lets the retry process", async () => {
    let fail = true;
    const { post, seen } = setup(() => {
      if (fail) throw new Error("database down: secret detail");
    });
    const failed = await post("msg_f");
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain("secret detail");
    fail = false;
    expect((await post("msg_f")).status).toBe(200);
    expect(seen).toEqual(["msg_f", "msg_f"]);
  });
});
