/**
 * `doorbell agent watch`: an agent in one command. It watches one intent on a holder, prints each
 * new match (title, price, location, url, from the holder's own intent_list_matches), asks for
 * doorbells when it has an endpoint the holder can call, and otherwise reads every 15 minutes.
 */
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import {
  type AgentError,
  createFileStateStore,
  DoorbellAgent,
  doorbellWords,
  type Match,
  nextReadWords,
  type SubscriptionReport,
} from "@doorbell/agent";
import { type Io, UsageError } from "../io.js";
import { parseFlags, stopSignal, untilStopped } from "./lifecycle.js";

export const AGENT_USAGE = `doorbell agent watch --holder MCP_URL --code ic_… [--listen HOST:PORT]
                     [--endpoint-url URL] [--state FILE] [--test]

Watches one intent: prints its new matches as they arrive and the state of its doorbells.
  --holder URL          the holder's MCP endpoint, e.g. http://127.0.0.1:8080/mcp
  --code CODE           the intentCode (or DOORBELL_INTENT_CODE, kept out of the process list)
  --listen HOST:PORT    serve the doorbell endpoint here (default 127.0.0.1:8787 with --endpoint-url)
  --endpoint-url URL    the URL the holder should call (default http://HOST:PORT/doorbell with
                        --listen). Production holders call https on port 443 only; a holder with
                        the local mailbox (development) also calls loopback http, for a demo.
  --state FILE          where the cursor, codes and secrets are kept between runs (mode 0600;
                        default .doorbell/agent-state.json)
  --test                mark calls as tests (x-isto-test: 1): no approval needed, short lease
Without --listen or --endpoint-url no doorbells are asked for: matches are read every 15 minutes.`;

const options = {
  holder: { type: "string" },
  code: { type: "string" },
  listen: { type: "string" },
  "endpoint-url": { type: "string" },
  state: { type: "string" },
  test: { type: "boolean" },
} as const;

export interface AgentControl {
  /** Resolves when the command should stop (default: SIGINT or SIGTERM). */
  until?: Promise<unknown>;
  /** Called once the intent is watched (and the listener serves, if any). */
  onWatching?: (info: { listening?: string }) => void;
}

const DEFAULT_LISTEN = "127.0.0.1:8787";

export async function agentCommand(
  args: readonly string[],
  io: Io,
  control: AgentControl = {},
): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "watch") {
    throw new UsageError(
      action === undefined ? "say doorbell agent watch" : `unknown agent action ${JSON.stringify(action)}`,
    );
  }
  const values = parseFlags(rest, options);
  const holderUrl = required(values.holder, "--holder");
  const code = values.code ?? io.env.DOORBELL_INTENT_CODE;
  if (code === undefined || code.trim() === "")
    throw new UsageError("give --code or DOORBELL_INTENT_CODE (the intentCode to watch)");
  const endpointUrl = values["endpoint-url"];
  const listen =
    values.listen === undefined && endpointUrl === undefined
      ? undefined
      : parseListen(values.listen ?? DEFAULT_LISTEN);
  const statePath = resolve(values.state ?? ".doorbell/agent-state.json");
  // Once the intent is withdrawn or expired there is nothing left to watch.
  let finished: (() => void) | undefined;
  const over = new Promise<void>((resolve) => {
    finished = resolve;
  });
  mkdirSync(dirname(statePath), { recursive: true, mode: 0o700 });

  // Serve first: with port 0 the endpoint's url is known only once the port is.
  let agent: DoorbellAgent | undefined;
  let server: http.Server | undefined;
  let listening: string | undefined;
  if (listen !== undefined) {
    server = http.createServer((req, res) => {
      if (agent === undefined) res.writeHead(503, { "retry-after": "1" }).end();
      else agent.listener.node(req, res);
    });
    await new Promise<void>((done, fail) => {
      server?.once("error", fail);
      server?.listen(listen.port, listen.host, () => done());
    });
    const address = server.address() as AddressInfo;
    listening = `http://${hostForUrl(address.address)}:${address.port}`;
  }
  try {
    agent = await DoorbellAgent.open({
      holder: { url: holderUrl, ...(values.test ? { test: true } : {}) },
      store: await createFileStateStore(statePath),
      ...(listening === undefined ? {} : { endpointUrl: endpointUrl ?? `${listening}/doorbell` }),
      onMatches: (_intent, matches) => {
        for (const match of matches) io.stdout(`${matchLine(match)}\n`);
      },
      onStatus: (intent, status) => {
        io.stdout(`intent ${intent.intentId ?? intent.handle}: ${status}\n`);
        if (status === "withdrawn" || status === "expired") {
          io.stdout(`the intent was ${status}: nothing more to watch; stopping\n`);
          finished?.();
        }
      },
      onDoorbell: (_intent, rang) => io.stdout(`${doorbellWords(rang, io.now())}\n`),
      onRead: (_intent, read) =>
        io.stdout(
          `read matches: ${read.newMatches === 0 ? "nothing new" : `${read.newMatches} new`}; ${nextReadWords(read.nextReadAt, io.now())}\n`,
        ),
      onSubscription: (_intent, report) => io.stdout(`${reportLine(report)}\n`),
      onError: (_intent, error) => io.stderr(`doorbell agent: ${errorLine(error)}\n`),
    });
    io.stdout(
      `Doorbell agent watching one intent on ${agent.holder.url.origin}${agent.holder.url.pathname}\n` +
        `  State       ${statePath} (mode 0600: it holds the intent code and the doorbell secrets)\n` +
        `  Doorbells   ${
          listening === undefined
            ? "none asked for (no --listen or --endpoint-url): reading matches every 15 minutes"
            : `listening on ${listening}; the holder ${agent.holder.supportsPush ? "offers" : "does not offer"} doorbells`
        }\n`,
    );
    await agent.watch(code.trim());
    agent.start();
    control.onWatching?.(listening === undefined ? {} : { listening });
    await untilStopped(io, Promise.race([control.until ?? stopSignal(), over]));
  } finally {
    await agent?.close();
    if (server !== undefined) {
      const closing = server;
      await new Promise<void>((done) => {
        closing.close(() => done());
        closing.closeAllConnections();
      });
    }
  }
  return 0;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === "") throw new UsageError(`${flag} is required`);
  return value.trim();
}

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65_535) {
    throw new UsageError(
      `--listen is HOST:PORT (e.g. 127.0.0.1:8787 or [::1]:8787), not ${JSON.stringify(value)}`,
    );
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

const hostForUrl = (host: string) => (host.includes(":") ? `[${host}]` : host);

export function matchLine(match: Match): string {
  const { offer } = match;
  const price = `${offer.price.amount.toLocaleString("en-US")} ${offer.price.currency}`;
  const where =
    offer.location.region === undefined
      ? offer.location.country
      : `${offer.location.region}, ${offer.location.country}`;
  return `new match: ${offer.title} — ${price} — ${where}${offer.url === undefined ? "" : ` — ${offer.url}`}`;
}

function reportLine(report: SubscriptionReport): string {
  return `doorbells: ${report.note}`;
}

function errorLine(error: AgentError): string {
  const holder = error.holderCode === undefined ? "" : `, ${error.holderCode}`;
  return `${error.message} (${error.code}${holder})`;
}
