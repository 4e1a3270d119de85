/**
 * The agent of the push bench, run in a worker thread so that its work does not share an event
 * loop with the holder under test. It owns one doorbell endpoint (node:http on 127.0.0.1 with the
 * real `@doorbell/webhooks` receiver: signature, timestamp window, webhook-id dedup, challenge) with
 * one path and one secret per subscription, and a few MCP sessions (the SDK's Client over Streamable
 * HTTP) to the holder. On each `intent.matches.delivered` it answers 2xx at once and then reads
 * `intent_list_matches` with `since` = the newest deliveredAt it has seen for that intent (one read
 * in flight per intent; a doorbell arriving meanwhile makes it read again), and reports every offer
 * it read with the moment the answer arrived (`clockMs()`, the process-wide monotonic clock).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";
import { scopedSignalFetch } from "@doorbell/holder";
import { createReceiver, toNodeHandler } from "@doorbell/webhooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface AgentData {
  mcpUrl: string;
  /** Per intent i: its intentCode and the secret of its subscription (path /hooks/<i>). */
  intents: { code: string; secret: string }[];
  sessions: number;
}

/** main → agent */
export type AgentCommand =
  | { kind: "subscriptions"; ids: string[] }
  | { kind: "round-trips"; intent: number; sinceEmpty: string; sinceOne: string; n: number }
  | { kind: "stats" }
  | { kind: "close" };

/** agent → main */
export type AgentReport =
  | { kind: "listening"; port: number }
  | { kind: "read"; offers: number[]; at: number }
  | { kind: "round-trips"; empty: number[]; one: number[] }
  | { kind: "stats"; stats: AgentStats };

export interface AgentStats {
  doorbells: number;
  otherEvents: number;
  reads: number;
  emptyReads: number;
  readErrors: number;
}

interface MatchesAnswer {
  matches: { offer: { title: string }; deliveredAt: string }[];
  more?: boolean;
}

/**
 * Milliseconds on the process-wide monotonic clock, as `clockMs()` of delivery-receiver.ts (not
 * imported: that module starts its own server when loaded in a worker thread).
 */
export function clockMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

/** The offer number the bench writes at the end of each title ("… #17"). */
const OFFER_NUMBER = /#(\d+)$/;

async function main(port: NonNullable<typeof parentPort>, data: AgentData): Promise<void> {
  const stats: AgentStats = { doorbells: 0, otherEvents: 0, reads: 0, emptyReads: 0, readErrors: 0 };
  const intentOf = new Map<string, number>();
  const state = data.intents.map(() => ({
    since: undefined as string | undefined,
    reading: false,
    again: false,
  }));

  const clients: Client[] = [];
  for (let s = 0; s < data.sessions; s++) {
    const client = new Client({ name: `bench-agent-${s}`, version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(data.mcpUrl), { fetch: scopedSignalFetch() }),
    );
    clients.push(client);
  }
  let nextClient = 0;
  const listMatches = async (intent: number, since: string | undefined): Promise<MatchesAnswer> => {
    const client = clients[nextClient++ % clients.length] as Client;
    const result = await client.callTool({
      name: "intent_list_matches",
      arguments: { intentCode: data.intents[intent]?.code, ...(since === undefined ? {} : { since }) },
    });
    if (result.isError) throw new Error(`intent_list_matches was refused: ${JSON.stringify(result.content)}`);
    return result.structuredContent as unknown as MatchesAnswer;
  };

  /** The agent's reaction to a doorbell: read what changed with its own code, from where it left off. */
  async function read(intent: number): Promise<void> {
    const own = state[intent];
    if (own === undefined) return;
    if (own.reading) {
      own.again = true;
      return;
    }
    own.reading = true;
    try {
      do {
        own.again = false;
        const answer = await listMatches(intent, own.since);
        const at = clockMs();
        stats.reads++;
        if (answer.matches.length === 0) stats.emptyReads++;
        const offers: number[] = [];
        for (const match of answer.matches) {
          const number = OFFER_NUMBER.exec(match.offer.title)?.[1];
          if (number !== undefined) offers.push(Number(number));
          if (own.since === undefined || match.deliveredAt > own.since) own.since = match.deliveredAt;
        }
        if (offers.length > 0) port.postMessage({ kind: "read", offers, at } satisfies AgentReport);
        if (answer.more) own.again = true;
      } while (own.again);
    } catch {
      stats.readErrors++;
    } finally {
      own.reading = false;
    }
  }

  const receiver = createReceiver({
    keys: (request) => {
      const intent = Number(/^\/hooks\/(\d+)$/.exec(new URL(request.url).pathname)?.[1] ?? Number.NaN);
      const secret = data.intents[intent]?.secret;
      return secret === undefined ? "gone" : { secrets: [secret] };
    },
    handler(event) {
      const body = event.json as { type?: string; data?: { subscriptionId?: string } };
      const intent = intentOf.get(body.data?.subscriptionId ?? "");
      if (body.type !== "intent.matches.delivered" || intent === undefined) {
        stats.otherEvents++;
        return;
      }
      stats.doorbells++;
      // Answer the holder at once; read after (a receiver should not hold the delivery open).
      setImmediate(() => void read(intent));
    },
  });
  const server = createServer({ keepAliveTimeout: 60_000 }, toNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  port.on("message", async (message: AgentCommand) => {
    if (message.kind === "subscriptions") {
      message.ids.forEach((id, intent) => {
        intentOf.set(id, intent);
      });
    } else if (message.kind === "round-trips") {
      // Sequential reads (the sessions in turn), empty and one-match interleaved.
      const empty: number[] = [];
      const one: number[] = [];
      for (let i = 0; i < message.n; i++) {
        let start = clockMs();
        const none = await listMatches(message.intent, message.sinceEmpty);
        empty.push(clockMs() - start);
        start = clockMs();
        const single = await listMatches(message.intent, message.sinceOne);
        one.push(clockMs() - start);
        if (none.matches.length !== 0 || single.matches.length !== 1)
          throw new Error("the round-trip reads did not answer 0 and 1 matches");
      }
      port.postMessage({ kind: "round-trips", empty, one } satisfies AgentReport);
    } else if (message.kind === "stats") {
      port.postMessage({ kind: "stats", stats: { ...stats } } satisfies AgentReport);
    } else {
      await Promise.allSettled(clients.map((client) => client.close()));
      server.closeAllConnections();
      server.close(() => port.close());
    }
  });
  port.postMessage({ kind: "listening", port: (server.address() as AddressInfo).port } satisfies AgentReport);
}

if (parentPort) await main(parentPort, workerData as AgentData);
