/**
 * What the holder's Events tests with the AI SDK share: its subscription store, and an intent
 * published over MCP and activated by the person (consent, then the confirmation mail).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { LocalMailbox } from "../../src/mail/local-mailbox.js";
import { basicPublish, type Published, tokenOf } from "./mcp-harness.js";
import type { HolderOnLoopback } from "./oauth-harness.js";

export { MemoryEventStore } from "../../../mcp-events/test/interop-harness.js";

/** An active intent for a Škoda `model`, published by an intentCode agent (2025 session client). */
export async function activeIntent(
  h: HolderOnLoopback,
  model: string,
  closers: (() => Promise<void>)[],
): Promise<Published> {
  const client = new Client({ name: "publisher", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.origin}/mcp`)));
  closers.push(() => client.close());
  const result = await client.callTool({
    name: "intent_publish_intent",
    arguments: basicPublish({
      statement: `A Škoda ${model}, diesel, near Bratislava`,
      criteria: { category: "vehicles", make: "Škoda", model, fuel: "diesel", mileageMaxKm: 120_000 },
    }),
  });
  const published = result.structuredContent as unknown as Published;
  const email = `${model.toLowerCase()}@example.sk`;
  await h.holder.services.consent.giveConsent(tokenOf(published.consentUrl), { email, accepted: true });
  const [mail] = await (h.holder.context.mailer as LocalMailbox).listMailbox({ to: email, limit: 1 });
  const token = /\/confirm\/([0-9A-Za-z]+)/.exec(mail?.text ?? "")?.[1];
  if (token === undefined) throw new Error("no confirmation mail");
  await h.holder.services.consent.confirmEmail(token);
  return published;
}
