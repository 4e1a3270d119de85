// Push profile §7 rules 1–2 at rest: the holder's code is kept sealed under the agent's forwarder
// code (found by a keyed hash of it under the forwarder's own keyring), so the forwarder cannot
// open it without the agent; and a relay record holds only what rule 2 lists — no statement, no
// match, and the relay path, the agent's url and both secrets never in clear. Rule 1: nothing in
// the relay record opens the holder's code — not even a copy sealed under the forwarder's own
// keyring (forwarder migration 2 added one; migration 3 empties and drops it, on both engines).
import { deliveryMigrations } from "@doorbell/delivery";
import { asTables, defineMigrations, migrate } from "@doorbell/store";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORWARDER_CODE, mintForwarderCode, openUnderCode, sealUnderCode } from "../src/codes.js";
import { createRecord, openRecord } from "../src/records.js";
import { endRelay } from "../src/relays.js";
import { forwarderMigrations, type RelayRow } from "../src/schema.js";
import {
  type AgentEndpoint,
  makeRelay,
  openedByKeyring,
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
        // When the holder's end request is due and how often it went: no code, no secret.
        "holder_end_due_at",
        "holder_end_attempts",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(row.holder_host).toBe("holder.example");
    expect(row.holder_subscription_id).toBe(relay.holderSubscriptionId);
    const everything = JSON.stringify([
      row,
      await ctx.store.db.selectFrom("delivery_subscriptions").selectAll().execute(),
      await ctx.store.db.selectFrom("forwarder_intents").selectAll().execute(),
    ]);
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

  it("no value in the relay table opens to the holder's code under the forwarder's keyring alone", async () => {
    const opened = await openedByKeyring(f.forwarder);
    // The scan does open what the keyring is for (the secret towards the holder): it is not empty.
    expect(opened).toContain(relay.holderSecret);
    expect(opened).not.toContain(relay.holderCode);
    for (const plain of opened) expect(plain).not.toContain(relay.holderCode.slice(3));
    // Only the agent's code opens it.
    expect((await openRecord(f.forwarder.context, relay.forwarderCode))?.holderCode).toBe(relay.holderCode);
  });

  it("ends a relay once", async () => {
    const ctx = f.forwarder.context;
    expect(await endRelay(ctx.store.db, relay.id, "unsubscribed", Date.now())).toBe(true);
    expect(await endRelay(ctx.store.db, relay.id, "unsubscribed", Date.now())).toBe(false);
  });

  it("migration 3 removes the holder-code copy a database at migration 2 kept", async () => {
    const fresh = await engine.createDatabase();
    const atTwo = defineMigrations("forwarder", forwarderMigrations.migrations.slice(0, 2));
    await migrate(fresh.db, [deliveryMigrations, atTwo]);
    const canary = "v1.k1.holder-code-copy-canary";
    // The relay table as migration 2 left it: the copy's column, none of the later ones.
    type RelayAtTwo = Omit<RelayRow, "holder_end_due_at" | "holder_end_attempts"> & {
      holder_code_sealed: string | null;
    };
    const db = asTables<{ forwarder_relays: RelayAtTwo }>(fresh.db).db;
    await db
      .insertInto("forwarder_relays")
      .values({
        agent_subscription_id: "sub_old",
        path_hash: "h1.p",
        owner_hash: "h1.o",
        endpoint_hash: "h1.e",
        holder_host: "holder.example",
        holder_subscription_id: "sub_holder",
        holder_secret_sealed: "v1.k1.secret",
        holder_previous_secret_sealed: null,
        holder_previous_until: null,
        expires_at: Date.now() + 86_400_000,
        refresh_before: Date.now(),
        status: "active",
        ended_reason: null,
        created_at: Date.now(),
        updated_at: Date.now(),
        holder_code_sealed: canary,
      })
      .execute();
    await migrate(fresh.db, [deliveryMigrations, forwarderMigrations]);
    const row = await db.selectFrom("forwarder_relays").selectAll().executeTakeFirstOrThrow();
    expect(Object.keys(row)).not.toContain("holder_code_sealed");
    expect(JSON.stringify(row)).not.toContain(canary);
    expect(row.agent_subscription_id).toBe("sub_old");
  });
});
