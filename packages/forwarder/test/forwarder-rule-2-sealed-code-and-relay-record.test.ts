// Push profile §7 rules 1–2 at rest: the holder's code is kept sealed under the agent's forwarder
// code (found by a keyed hash of it under the forwarder's own keyring), so the forwarder cannot
// open it without the agent; and a relay record holds only what rule 2 lists — no statement, no
// match, and the relay path, the agent's url and both secrets never in clear — plus, while it
// lives, the holder's code sealed under the forwarder's keyring for rule 6 (cleared when it ends).
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORWARDER_CODE, mintForwarderCode, openUnderCode, sealUnderCode } from "../src/codes.js";
import { createRecord, openRecord } from "../src/records.js";
import { endRelay } from "../src/relays.js";
import {
  type AgentEndpoint,
  makeRelay,
  type Relay,
  startAgentEndpoint,
  startForwarder,
} from "./forwarder-harness.js";

const HOLDER_CODE = "ic_CanaryHolderCode0123456789abcdefXY";

describe("sealing under the agent's code", () => {
  it("mints fc_ codes of at least 128 random bits, all different", () => {
    const codes = Array.from({ length: 200 }, mintForwarderCode);
    for (const code of codes) expect(code).toMatch(FORWARDER_CODE);
    expect((codes[0]?.length ?? 0) - 3).toBeGreaterThanOrEqual(Math.ceil(128 / Math.log2(62)));
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("opens only with the same code and the same record id; an altered value opens to nothing", () => {
    const code = mintForwarderCode();
    const sealed = sealUnderCode(HOLDER_CODE, code, "fwi_a");
    expect(sealed).not.toContain(HOLDER_CODE);
    expect(openUnderCode(sealed, code, "fwi_a")).toBe(HOLDER_CODE);
    expect(openUnderCode(sealed, mintForwarderCode(), "fwi_a")).toBeUndefined();
    expect(openUnderCode(sealed, code, "fwi_b")).toBeUndefined();
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === "A" ? "B" : "A"}${sealed.at(-1)}`;
    expect(openUnderCode(flipped, code, "fwi_a")).toBeUndefined();
    expect(openUnderCode("not sealed", code, "fwi_a")).toBeUndefined();
  });
});

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  let f: Awaited<ReturnType<typeof startForwarder>>;
  let agent: AgentEndpoint;
  let relay: Relay;

  beforeAll(async () => {
    f = await startForwarder(engine, "http://127.0.0.1:9/mcp");
    agent = await startAgentEndpoint();
    relay = await makeRelay(f.forwarder, agent);
  });
  afterAll(async () => {
    await f?.close();
    await agent?.close();
  });

  it("stores the holder's code sealed and the forwarder code only as a keyed hash; the code opens it", async () => {
    const ctx = f.forwarder.context;
    const { id, forwarderCode } = await createRecord(ctx, HOLDER_CODE);
    const row = await ctx.store.db
      .selectFrom("forwarder_intents")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const text = JSON.stringify(row);
    expect(text).not.toContain(HOLDER_CODE);
    expect(text).not.toContain(HOLDER_CODE.slice(3));
    expect(text).not.toContain(forwarderCode);
    expect(text).not.toContain(forwarderCode.slice(3));
    expect(row.code_hash).toMatch(/^h1\./);
    expect(await openRecord(ctx, forwarderCode)).toEqual({ id, holderCode: HOLDER_CODE });
    // Everything the forwarder holds without the agent's code opens nothing.
    expect(openUnderCode(row.holder_code_sealed, row.code_hash, id)).toBeUndefined();
    expect(await openRecord(ctx, mintForwarderCode())).toBeUndefined();
    const other = forwarderCode.endsWith("x") ? "y" : "x";
    expect(await openRecord(ctx, `${forwarderCode.slice(0, -1)}${other}`)).toBeUndefined();
    expect(await openRecord(ctx, "ic_notaforwardercode")).toBeUndefined();
  });

  it("a relay record holds exactly rule 2's fields, with nothing secret in clear", async () => {
    const ctx = f.forwarder.context;
    const row = await ctx.store.db
      .selectFrom("forwarder_relays")
      .selectAll()
      .where("agent_subscription_id", "=", relay.id)
      .executeTakeFirstOrThrow();
    expect(Object.keys(row).sort()).toEqual(
      [
        "agent_subscription_id",
        "path_hash",
        "owner_hash",
        "endpoint_hash",
        "holder_host",
        "holder_subscription_id",
        "holder_secret_sealed",
        "holder_previous_secret_sealed",
        "holder_previous_until",
        "expires_at",
        "refresh_before",
        "status",
        "ended_reason",
        "created_at",
        "updated_at",
        "holder_code_sealed",
      ].sort(),
    );
    expect(row.holder_host).toBe("holder.example");
    expect(row.holder_subscription_id).toBe(relay.holderSubscriptionId);
    const everything = JSON.stringify([
      row,
      await ctx.store.db.selectFrom("delivery_subscriptions").selectAll().execute(),
      await ctx.store.db.selectFrom("forwarder_intents").selectAll().execute(),
    ]);
    expect(row.holder_code_sealed).toMatch(/^v1\./);
    for (const secret of [
      relay.path,
      relay.holderSecret,
      relay.holderCode,
      relay.holderCode.slice(3),
      relay.forwarderCode,
      agent.secret,
      agent.url,
    ]) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toContain(agent.secret.slice(6));
    expect(everything).not.toContain(relay.holderSecret.slice(6));
  });

  it("an ended relay no longer holds the holder's code", async () => {
    const ctx = f.forwarder.context;
    expect(await endRelay(ctx.store.db, relay.id, "unsubscribed", Date.now())).toBe(true);
    expect(await endRelay(ctx.store.db, relay.id, "unsubscribed", Date.now())).toBe(false);
    const row = await ctx.store.db
      .selectFrom("forwarder_relays")
      .select(["status", "holder_code_sealed"])
      .where("agent_subscription_id", "=", relay.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "ended", holder_code_sealed: null });
  });
});
