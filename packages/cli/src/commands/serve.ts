import { parseArgs } from "node:util";
import { createHolder, type Holder } from "@doorbell/holder";
import { type Io, UsageError } from "../io.js";
import { holderLogger, holderSettings, keysLine, SHARED_USAGE, sharedOptions } from "./holder-config.js";

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

function parse(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function port(value: string | undefined): number {
  if (value === undefined) return 8080;
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value) || n > 65_535)
    throw new UsageError(`--port is a number from 0 to 65535, not ${JSON.stringify(value)}`);
  return n;
}

function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

export async function serveCommand(
  args: readonly string[],
  io: Io,
  control: ServeControl = {},
): Promise<number> {
  const values = parse(args);
  if (values.demo && values["no-demo"]) throw new UsageError("give --demo or --no-demo, not both");
  const listenPort = port(values.port);
  const host = values.host?.trim() || "127.0.0.1";
  const shownHost =
    host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  if (listenPort === 0 && values["public-url"] === undefined && io.env.DOORBELL_PUBLIC_URL === undefined) {
    throw new UsageError(
      "--port 0 picks a free port, so the public URL cannot be guessed: give --public-url too",
    );
  }
  const webhookPolicy = values["webhook-policy"];
  if (webhookPolicy !== undefined && webhookPolicy !== "production" && webhookPolicy !== "development") {
    throw new UsageError(
      `--webhook-policy is production or development, not ${JSON.stringify(webhookPolicy)}`,
    );
  }
  const settings = holderSettings(values, io, `http://${shownHost}:${listenPort}`);
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
  let address: { port: number; host: string };
  try {
    address = await holder.listen(listenPort, host);
  } catch (error) {
    await holder.close();
    throw error;
  }

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
    ["Active intents", String(s.activeIntents)],
    ["Listening on", `${address.host}:${address.port}`],
  ];
  io.stdout(
    `${s.name} (Isto Intents MCP binding 0.1, consent-link and push profiles)\n${rows
      .map(([name, value]) => `  ${name.padEnd(15)} ${value}`)
      .join("\n")}\n\nConnect an MCP client (Streamable HTTP) to ${s.mcpUrl}. Ctrl+C stops.\n`,
  );
  control.onListening?.(holder, address);
  await (control.until ?? stopSignal());
  io.stdout("stopping…\n");
  await holder.close();
  return 0;
}
