import { createForwarder, type Forwarder } from "@doorbell/forwarder";
import { developmentPolicy } from "@doorbell/webhooks";
import { type Io, UsageError } from "../io.js";
import { ENV, holderLogger, holderSettings, keysLine } from "./holder-config.js";
import {
  listenFlags,
  listenOrClose,
  parseFlags,
  printSummary,
  untilStopped,
  webhookPolicyFlag,
} from "./lifecycle.js";

export const FORWARDER_USAGE = `doorbell forwarder --upstream URL [--port 8090] [--host 127.0.0.1] [--webhook-policy production]
               [--data-dir .doorbell-forwarder] [--database postgres://…] [--public-url URL]

Runs a forwarder (push profile §7): an MCP server at /mcp in front of the intent holder at
--upstream, keeping the holder's codes sealed under the agents' own codes, and relaying the
holder's doorbells to agents from /relay/….
  --upstream URL        the holder's MCP endpoint, e.g. https://intents.example.sk/mcp (DOORBELL_UPSTREAM_URL)
  --port N              default 8090 (0 needs --public-url)
  --host ADDRESS        default 127.0.0.1; 0.0.0.0 listens on every interface
  --webhook-policy P    where doorbells to agents may go: production (https:443, public addresses
                        only; the default) or development (also http and loopback, for a demo on one machine)
  --data-dir DIR        where the SQLite file and the generated seal keys live (default .doorbell-forwarder; ${ENV.dataDir})
  --database URL        postgres://user:pass@host/db instead of SQLite (${ENV.database})
  --public-url URL      the forwarder's public origin: agents connect to it and the holder rings it (${ENV.publicUrl})
Log lines (JSON) go to stderr at DOORBELL_LOG_LEVEL (default info).`;

const UPSTREAM_ENV = "DOORBELL_UPSTREAM_URL";

const options = {
  upstream: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "webhook-policy": { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  "public-url": { type: "string" },
} as const;

export interface ForwarderControl {
  /** Resolves when the forwarder should stop (default: SIGINT or SIGTERM). */
  until?: Promise<unknown>;
  onListening?: (forwarder: Forwarder, address: { port: number; host: string }) => void;
}

function upstreamUrl(value: string | undefined): string {
  if (value === undefined || value.trim() === "") {
    throw new UsageError(
      `--upstream is required: the MCP endpoint of the intent holder to forward to (or ${UPSTREAM_ENV})`,
    );
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(
      `--upstream must be an absolute URL like https://intents.example.sk/mcp, not ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UsageError("--upstream must start with https:// or http://");
  if (url.username !== "" || url.password !== "")
    throw new UsageError("--upstream must not carry a user name or password");
  return url.href;
}

export async function forwarderCommand(
  args: readonly string[],
  io: Io,
  control: ForwarderControl = {},
): Promise<number> {
  const values = parseFlags(args, options);
  const upstream = upstreamUrl(values.upstream ?? io.env[UPSTREAM_ENV]);
  const listen = listenFlags(values, io, 8090);
  const webhookPolicy = webhookPolicyFlag(values["webhook-policy"]) ?? "production";
  const settings = holderSettings(
    {
      "data-dir":
        values["data-dir"] ?? (io.env[ENV.dataDir] === undefined ? ".doorbell-forwarder" : undefined),
      ...(values.database === undefined ? {} : { database: values.database }),
      ...(values["public-url"] === undefined ? {} : { "public-url": values["public-url"] }),
    },
    io,
    listen.guessedUrl,
  );
  const log = holderLogger(io, "info");
  const forwarder = await createForwarder({
    upstream,
    dataDir: settings.dataDir,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    publicUrl: settings.publicUrl,
    // The default (production) also refuses the forwarder's own host; development is asked for by name.
    ...(webhookPolicy === "development" ? { policy: developmentPolicy() } : {}),
    env: io.env,
    log,
  });
  const address = await listenOrClose(forwarder, listen);
  const s = forwarder.summary;
  const rows: [string, string][] = [
    ["MCP endpoint", s.mcpUrl],
    ["Upstream holder", s.upstream],
    ["Relay endpoints", `${s.publicUrl}/relay/… (the holder rings these)`],
    [
      "Doorbells",
      s.egress === "production"
        ? "to agents' https:443 endpoints with public addresses"
        : "development policy: loopback and http endpoints allowed",
    ],
    ["Database", s.database],
    ["Seal keys", keysLine(s.keys, s.keyFile)],
    ["Listening on", `${address.host}:${address.port}`],
  ];
  printSummary(io, "Doorbell forwarder (Isto Intents MCP binding 0.1, push profile 0.4 §7)", rows, s.mcpUrl);
  control.onListening?.(forwarder, address);
  await untilStopped(io, control.until);
  await forwarder.close();
  return 0;
}
