// The holder client against a real holder over MCP (SDK Client, Streamable HTTP, loopback):
// publish, get, listMatches with since, withdraw; every refusal is one AgentError with a stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentError, HolderClient } from "../src/index.js";
import { MINUTE, type RunningHolder, startHolder } from "./holder-fixture.js";

let h: RunningHolder;
beforeAll(async () => {
  h = await startHolder();
});
afterAll(async () => {
  await h?.close();
});

const refusal = async (promise: Promise<unknown>): Promise<AgentError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AgentError);
  return error as AgentError;
};

describe("holder client: the binding's buyer tools", () => {
  it("reads an active intent and its matches, only newer ones with since", async () => {
    const { intentCode, intentId } = await h.activeIntent();
    const client = await h.client();
    const intent = await client.get(intentCode);
    expect(intent).toMatchObject({ id: intentId, status: "active" });

    await h.addOffers(2);
    const first = await client.listMatches(intentCode);
    expect(first.matches).toHaveLength(2);
    expect(first.matches[0]?.offer).toMatchObject({
      title: expect.stringContaining("Octavia"),
      price: { currency: "EUR" },
    });

    h.clock.advance(15 * MINUTE);
    await h.addOffers(1);
    const since = first.matches.at(-1)?.deliveredAt;
    const second = await client.listMatches(intentCode, { since });
    expect(second.matches).toHaveLength(1);
  });

  it("withdraws, after which the code no longer reads the intent's matches as active", async () => {
    const { intentCode } = await h.activeIntent();
    const client = await h.client();
    expect(await client.withdraw(intentCode)).toEqual({ status: "withdrawn" });
    expect((await client.get(intentCode)).status).toBe("withdrawn");
  });

  it("turns an unknown code into ERR_AGENT_NOT_FOUND with the holder's code and words, never the code itself", async () => {
    const client = await h.client();
    const code = "ic_thisCodeDoesNotExist0123456789";
    const error = await refusal(client.get(code));
    expect(error.code).toBe("ERR_AGENT_NOT_FOUND");
    expect(error.holderCode).toBe("ERR_HOLDER_NOT_FOUND");
    expect(error.message).toMatch(/intent_get_intent.*no intent has this intentCode/);
    expect(error.message).not.toContain(code);
  });

  it("turns a schema refusal into ERR_AGENT_INVALID_INPUT naming the undeclared argument", async () => {
    const client = await h.client();
    const error = await refusal(client.publish({ statement: "x", area: { country: "SK" }, email: "a@b.sk" }));
    expect(error.code).toBe("ERR_AGENT_INVALID_INPUT");
    expect(error.message).toMatch(/email/);
  });

  it("refuses bad arguments before calling the holder", async () => {
    const client = await h.client();
    expect((await refusal(client.get(""))).code).toBe("ERR_AGENT_INVALID_ARGUMENT");
    expect((await refusal(client.listMatches("ic_x", { since: "yesterday" }))).code).toBe(
      "ERR_AGENT_INVALID_ARGUMENT",
    );
    const sub = { url: "https://agent.example.com/d", secret: "whsec_short" };
    expect((await refusal(client.subscribe("ic_x", sub))).message).toMatch(/secret/);
    const bad = { url: "ftp://agent.example.com/d", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };
    expect((await refusal(client.subscribe("ic_x", bad))).message).toMatch(/https/);
  });

  it("says plainly when the holder cannot be reached", async () => {
    const error = await refusal(HolderClient.connect({ url: "http://127.0.0.1:9/mcp" }));
    expect(error.code).toBe("ERR_AGENT_UNREACHABLE");
    expect(error.message).toMatch(
      /could not open an MCP session with the holder at http:\/\/127\.0\.0\.1:9\/mcp/,
    );
  });

  it("speaks 2026-07-28 without a session, so a holder that forgot every session changes nothing", async () => {
    const { intentCode } = await h.activeIntent();
    const client = await h.client();
    await client.get(intentCode);
    // Version negotiation chose the stateless revision: the holder keeps no session for this agent.
    expect(h.holder.mcp.sessionCount).toBe(0);
    h.clock.advance(31 * MINUTE);
    await h.holder.mcp.sweep();
    expect((await client.get(intentCode)).status).toBe("active");
  });
});
