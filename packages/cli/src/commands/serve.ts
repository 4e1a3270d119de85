import { createHolder, type Holder } from "@doorbell/holder";
import { type Io, UsageError } from "../io.js";
import { holderLogger, holderSettings, keysLine, SHARED_USAGE, sharedOptions } from "./holder-config.js";
import {
  listenFlags,
  listenOrClose,
  parseFlags,
  printSummary,
  untilStopped,
  webhookPolicyFlag,
} from "./lifecycle.js";

export const SERVE_USAGE = `doorbell serve [--port 8080] [--host 127.0.0.1] [--no-demo] [--webhook-policy production]
               [--data-dir .doorbell] [--database postgres://…] [--public-url URL] [--smtp smtp://…]

Runs the intent holder: the MCP endpoint at /mcp, the consent pages and, with no SMTP server,
a local mailbox page. With no flags: a SQLite file under .doorbell, the demo catalogue
(imported once) and the local mailbox.
  --port N              default 8080 (0 needs --public-url)
  --host ADDRESS        default 127.0.0.1; 0.0.0.0 listens on every interface
  --no-demo             do not import the demo catalogue
  --webhook-policy P    where doorbells (push profile) may go: production (https:443, public
                        addresses only) or development (also http and loopback, for a demo on one
                        machine). Default: development with the local mailbox, production with SMTP
${SHARED_USAGE}
Log lines (JSON) go to stderr at DOORBELL_LOG_LEVEL (default info).`;

const options = {
  ...sharedOptions,
  port: { type: "string" },
  host: { type: "string" },
  demo: { type: "boolean" },
  "no-demo": { type: "boolean" },
  "webhook-policy": { type: "string" },
} as const;

export interface ServeControl {
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  until?: Promise<unknown>;
  /** Called once the holder listens. */
  onListening?: (holder: Holder, address: { port: number; host: string }) => void;
}

export async function serveCommand(
  args: readonly string[],
  io: Io,
  control: ServeControl = {},
): Promise<number> {
  const values = parseFlags(args, options);
  if (values.demo && values["no-demo"]) throw new UsageError("give --demo or --no-demo, not both");
  const listen = listenFlags(values, io, 8080);
  const webhookPolicy = webhookPolicyFlag(values["webhook-policy"]);
  const settings = holderSettings(values, io, listen.guessedUrl);
  const log = holderLogger(io, "info");

  const holder = await createHolder({
    dataDir: settings.dataDir,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    publicUrl: settings.publicUrl,
    ...(settings.smtp === undefined ? {} : { smtp: settings.smtp }),
    ...(settings.mailFrom === undefined ? {} : { mailFrom: settings.mailFrom }),
    demo: values["no-demo"] !== true,
    ...(webhookPolicy === undefined ? {} : { webhookPolicy }),
    env: io.env,
    log,
  });
  const address = await listenOrClose(holder, listen);

  const s = holder.summary;
  const demo =
    s.demo === undefined
      ? "off (--no-demo)"
      : s.demo.skipped
        ? "already imported"
        : `imported ${s.demo.imported.toLocaleString("en-US")} offers`;
  const rows: [string, string][] = [
    ["MCP endpoint", s.mcpUrl],
    ["Pages", `${s.publicUrl}/ (consent, confirm and manage pages open from the links the holder gives)`],
    [
      "Mailbox",
      s.mailboxUrl === undefined
        ? `none: ${s.mail}`
        : `${s.mailboxUrl} (no SMTP configured: every mail lands here)`,
    ],
    ["Descriptor", `${s.publicUrl}/.well-known/isto-intents.json`],
    ["Database", s.database],
    ["Seal keys", keysLine(s.keys, s.keyFile)],
    ["Demo catalogue", demo],
    [
      "Doorbells",
      s.webhookPolicy === "production"
        ? "push profile; endpoints must be https:443 with public addresses"
        : "push profile; development policy: loopback and http endpoints allowed",
    ],
    [
      "Sign-in",
      s.oauth === "off"
        ? "none (consent-link only)"
        : `OAuth 2.1 for assistants (${s.oauth === "built-in" ? `${s.publicUrl}/oauth` : "external issuer"}; metadata at /.well-known/oauth-protected-resource/mcp)`,
    ],
    ["Active intents", String(s.activeIntents)],
    ["Listening on", `${address.host}:${address.port}`],
  ];
  printSummary(
    io,
    `${s.name} (Isto Intents MCP binding 0.1, consent-link and push profiles)`,
    rows,
    s.mcpUrl,
  );
  control.onListening?.(holder, address);
  await untilStopped(io, control.until);
  await holder.close();
  return 0;
}
