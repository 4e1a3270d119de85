/**
 * The two sides of a push subscription the agent does not hold: a test caller (an MCP client whose
 * every request carries `x-isto-test: 1`, push profile §6 rule 9) and the approval link the holder
 * mails to the person (rule 3).
 */
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestHolder } from "./mcp-harness.js";

/** A connected MCP client making test calls; the caller closes it. */
export async function connectTester(h: TestHolder): Promise<Client> {
  const tester = new Client({ name: "tester", version: "1" });
  await tester.connect(
    new StreamableHTTPClientTransport(h.mcpUrl, {
      fetch: scopedSignalFetch(),
      requestInit: { headers: { "x-isto-test": "1" } },
    }),
  );
  return tester;
}

/** The token of the newest approval link the holder mailed to `email`. */
export async function approvalToken(h: TestHolder, email: string): Promise<string> {
  const mails = await h.ctx.mailbox.listMailbox({ to: email, limit: 20 });
  const mail = mails.find((entry) => entry.subject.startsWith("Allow an assistant"));
  const token = mail === undefined ? undefined : /\/notifications\/([0-9A-Za-z]+)/.exec(mail.text)?.[1];
  if (token === undefined) throw new Error(`no approval mail to ${email}`);
  return token;
}
