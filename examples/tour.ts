/**
 * The README's tour as one script: a holder with the demo catalogue, an assistant publishing an
 * intent over MCP, the person consenting and confirming on the holder's own pages (as a browser
 * would: form token cookie, hidden fields, the confirmation mail in the local mailbox), the agent
 * reading its matches with the code it kept, and the withdrawal taking effect at once.
 *
 *   node --import tsx --conditions=@doorbell/source examples/tour.ts [--keep]
 *
 * Everything runs on loopback in a temporary data directory (deleted at the end unless --keep).
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createHolder } from "@doorbell/holder";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { pino } from "pino";

/** Just enough of a browser for the holder's forms: cookies, hidden fields, same-origin posts. */
class Browser {
  private readonly cookies = new Map<string, string>();
  private lastUrl = "";
  constructor(private readonly origin: string) {}

  async open(url: string): Promise<string> {
    return this.request(url, { method: "GET" });
  }

  /** Posts the page's first POST form with its hidden fields plus `fields`. */
  async submit(page: string, fields: Record<string, string>): Promise<string> {
    const form = /<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(page);
    if (form === null) throw new Error(`no form on ${this.lastUrl}`);
    const action = /action="([^"]*)"/.exec(form[0])?.[1] ?? this.lastUrl;
    const body = new URLSearchParams();
    for (const input of form[1]?.matchAll(/<input[^>]*type="hidden"[^>]*>/g) ?? []) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? "";
      if (name !== undefined) body.set(name, value.replaceAll("&amp;", "&"));
    }
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return this.request(new URL(action.replaceAll("&amp;", "&"), this.lastUrl).href, {
      method: "POST",
      body,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: this.origin },
    });
  }

  private async request(url: string, init: RequestInit, hops = 0): Promise<string> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (pair !== undefined && eq > 0) this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location !== null && hops < 5) {
      return this.request(new URL(location, url).href, { method: "GET" }, hops + 1);
    }
    if (!response.ok) throw new Error(`${init.method} ${url}: HTTP ${response.status}`);
    this.lastUrl = url;
    return response.text();
  }
}

const keep = process.argv.includes("--keep");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-tour-"));
const step = (n: number, text: string) => console.log(`\n${n}. ${text}`);

// The holder `npx doorbell serve` runs, in this process, on a free loopback port.
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const holder = await createHolder({ dataDir, publicUrl: origin, demo: true, log: pino({ level: "silent" }) });
await holder.listen(port, "127.0.0.1");
console.log(
  `A holder with ${holder.summary.demo?.imported ?? 0} demo offers at ${origin}/mcp (data in ${dataDir})`,
);

try {
  step(1, "An assistant publishes what a person wants (MCP, Streamable HTTP).");
  // MCP 2026-07-28 first (stateless), a 2025-11-25 session where a holder is older.
  const assistant = new Client({ name: "tour", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await assistant.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  const published = (await tool(assistant, "intent_publish_intent", {
    statement: "A Škoda Octavia combi, diesel, near Bratislava",
    criteria: { category: "vehicles", make: "Škoda", model: "Octavia", fuel: "diesel" },
    area: { country: "SK", region: "SK-BL" },
    budget: { amount: 20_000, currency: "EUR" },
  })) as { intent: { id: string; status: string }; intentCode: string; consentUrl: string };
  console.log(
    `   status ${published.intent.status}; the agent keeps its intentCode; the person gets ${published.consentUrl}`,
  );

  step(2, "The person consents on the holder's page and confirms the e-mail.");
  const browser = new Browser(origin);
  const consent = await browser.open(published.consentUrl);
  await browser.submit(consent, { email: "jana@example.sk", consent: "yes" });
  // The local mailbox lives at a secret path the holder prints at start-up.
  const mailboxUrl = holder.summary.mailboxUrl;
  if (mailboxUrl === undefined) throw new Error("no local mailbox (SMTP configured?)");
  const mailbox = await browser.open(mailboxUrl);
  const mailboxPath = new URL(mailboxUrl).pathname;
  const newest = new RegExp(`href="(${mailboxPath}/[^"]+)"`).exec(mailbox)?.[1];
  if (newest === undefined) throw new Error("no mail in the local mailbox");
  const mail = await browser.open(`${origin}${newest}`);
  const confirmUrl = /(https?:\/\/[^\s"<]+\/confirm\/[0-9A-Za-z]+)/.exec(mail)?.[1];
  if (confirmUrl === undefined) throw new Error("no confirm link in the mail");
  const confirmPage = await browser.open(confirmUrl);
  await browser.submit(confirmPage, {});
  const intent = await tool(assistant, "intent_get_intent", { intentCode: published.intentCode });
  console.log(`   the intent is now ${statusOf(intent)}, matched against the demo catalogue`);

  step(3, "The agent pulls the matches with the code it kept.");
  const { matches } = (await tool(assistant, "intent_list_matches", {
    intentCode: published.intentCode,
  })) as {
    matches: { offer: { title: string; price: { amount: number; currency: string } } }[];
  };
  console.log(`   ${matches.length} ${matches.length === 1 ? "match" : "matches"}:`);
  for (const { offer } of matches.slice(0, 3)) {
    console.log(
      `   - ${offer.title} — ${offer.price.amount.toLocaleString("en-US")} ${offer.price.currency}`,
    );
  }

  step(4, "Doorbells instead of polling: see `doorbell agent watch --help` (push profile 0.4).");

  step(5, "Withdrawing takes effect at once.");
  await tool(assistant, "intent_withdraw_intent", { intentCode: published.intentCode });
  const after = await tool(assistant, "intent_get_intent", { intentCode: published.intentCode });
  console.log(`   status ${statusOf(after)}`);
  await assistant.close();
} finally {
  await holder.close();
  if (!keep) fs.rmSync(dataDir, { recursive: true, force: true });
}

/** An Intent's status, whether the result is the Intent or wraps it. */
function statusOf(result: unknown): string {
  const value = result as { status?: string; intent?: { status?: string } };
  return value.status ?? value.intent?.status ?? "unknown";
}

/** A tool call's structured result; a refusal stops the tour with the holder's words. */
async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
