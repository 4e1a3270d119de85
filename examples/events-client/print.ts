/**
 * Prints the events of an MCP Events server with the Doorbell client SDK, one line each.
 *
 *   node --import tsx --conditions=@doorbell/source examples/events-client/print.ts \
 *     [--url http://127.0.0.1:8765/mcp] [--mode poll|push|webhook] [--event file.created] [--listen 127.0.0.1:8768]
 *     [--token dev-token] [--dialect sketch|sep-3415]
 *
 * Without --mode the SDK picks webhook > push > poll from what both sides support; webhook mode
 * needs --listen (where the server can reach this process; loopback is fine for a local server).
 * --token sends `Authorization: Bearer <token>` (a server that wants a principal for webhooks).
 * Without --dialect the connection's era decides: SEP-3415 on 2026-07-28, the sketch on 2025-11-25.
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { type DeliveryMode, EventsClient, type EventsSubscription } from "@doorbell/mcp-events";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:8765/mcp" },
    mode: { type: "string" },
    event: { type: "string", multiple: true },
    listen: { type: "string" },
    token: { type: "string" },
    dialect: { type: "string" },
  },
});
const modes = ["poll", "push", "webhook"];
if (values.mode !== undefined && !modes.includes(values.mode)) {
  console.error(`--mode must be one of ${modes.join(", ")}`);
  process.exit(2);
}
if (values.dialect !== undefined && values.dialect !== "sketch" && values.dialect !== "sep-3415") {
  console.error("--dialect must be sketch or sep-3415");
  process.exit(2);
}
if (values.mode === "webhook" && values.listen === undefined) {
  console.error("--mode webhook needs --listen host:port (where the server can POST events)");
  process.exit(2);
}

const url = new URL(values.url);
// An SDK v2 Client: 2026-07-28 when the server speaks it, else a 2025-11-25 session.
const connect = async () => {
  const client = new Client(
    { name: "events-print", version: "0.1.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  const headers = values.token === undefined ? undefined : { authorization: `Bearer ${values.token}` };
  await client.connect(new StreamableHTTPClientTransport(url, headers ? { requestInit: { headers } } : {}));
  return client;
};

let receiver: ReturnType<typeof createServer> | undefined;
const [host, port] = (values.listen ?? "").split(":");
const events = new EventsClient({
  connect,
  ...(values.dialect === undefined ? {} : { dialect: values.dialect }),
  ...(values.listen === undefined ? {} : { webhook: { url: `http://${host}:${port}/hooks` } }),
  onNotice: (notice, sub) => console.error(`# ${sub.name}: ${JSON.stringify(notice)}`),
});
if (events.receiver) {
  receiver = createServer(events.receiver.node);
  await new Promise<void>((resolve) => receiver?.listen(Number(port), host, resolve));
}

const names = values.event ?? (await events.list()).map((type) => type.name);
const subs: EventsSubscription[] = [];
for (const name of names) {
  const sub = await events.subscribe(name, {}, values.mode ? { delivery: values.mode as DeliveryMode } : {});
  console.error(`# ${name}: subscribed by ${sub.mode}`);
  subs.push(sub);
}

const stop = async () => {
  for (const sub of subs) await sub.cancel().catch(() => undefined);
  await events.close();
  receiver?.closeAllConnections();
  receiver?.close();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());

await Promise.all(
  subs.map(async (sub) => {
    for await (const event of sub)
      console.log(`${event.timestamp} ${event.name} ${JSON.stringify(event.data)}`);
  }),
);
