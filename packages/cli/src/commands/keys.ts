/**
 * `doorbell keys export|import`: gives every holder process the same seal keys.
 * export prints the keys this data directory uses (from DOORBELL_SEAL_KEYS, else its generated key
 * file); import writes a copy as another data directory's key file (mode 0600). A process started
 * with other keys than the ones the database is sealed with refuses to start and points here.
 */
import fs from "node:fs";
import path from "node:path";
import { GENERATED_KEY_FILE, loadKeyring, parseKeyring } from "@doorbell/store";
import { type Io, UsageError } from "../io.js";
import { ENV } from "./holder-config.js";
import { parseSubcommand } from "./lifecycle.js";

export const KEYS_USAGE = `doorbell keys export [--data-dir .doorbell]
doorbell keys import FILE|- [--data-dir .doorbell] [--replace]

Every process serving one database must seal with the same keys. export prints this data
directory's seal keys (DOORBELL_SEAL_KEYS when set, else the key file doorbell serve generated
there) in the key file format; import writes FILE (or - for stdin) as the data directory's key
file, mode 0600, so doorbell serve there uses it. Or set the same DOORBELL_SEAL_KEYS everywhere.
The output is a secret: keep it out of logs, shells' history and chat. export refuses to write
into a file other users can read, import refuses such a file, and both refuse a key that is not
32 random bytes (zeros, a repeated pattern, a passphrase).
  --data-dir DIR   the data directory (default .doorbell; ${ENV.dataDir})
  --replace        import over an existing key file with other keys (kept as seal-keys.replaced-<time>)`;

const options = {
  "data-dir": { type: "string" },
  replace: { type: "boolean" },
} as const;

export async function keysCommand(args: readonly string[], io: Io): Promise<number> {
  const { action, values, positionals } = parseSubcommand(
    args,
    "keys",
    ["export", "import"] as const,
    options,
  );
  const dataDir = path.resolve(values["data-dir"]?.trim() || io.env[ENV.dataDir]?.trim() || ".doorbell");
  const keyFile = path.join(dataDir, GENERATED_KEY_FILE);

  if (action === "export") {
    if (positionals.length > 0) throw new UsageError("export takes no file: redirect its output");
    const fromEnv = io.env.DOORBELL_SEAL_KEYS?.trim();
    if (!fromEnv && !fs.existsSync(keyFile)) {
      throw new Error(`no seal keys in ${dataDir}: doorbell serve creates them on its first start`);
    }
    // Read as doorbell serve reads them (the same precedence and checks); never generated here.
    const outMode = io.redirectedFileMode(1);
    if (outMode !== undefined && (outMode & 0o077) !== 0) {
      throw new Error(
        `stdout is a file other users can read (mode ${modeText(outMode)}): export into a new file with (umask 077; doorbell keys export > FILE), or pipe it into doorbell keys import -`,
      );
    }
    const loaded = loadKeyring(fromEnv ? { env: io.env } : { keyFile, env: {} });
    const text = fromEnv || fs.readFileSync(keyFile, "utf8"); // an empty variable is no keys
    parseKeyring(text);
    io.stdout(`${keyLines(text)}\n`);
    io.stderr(
      `exported ${loaded.keyring.keyIds.length} seal key(s) (${loaded.source}); the output is secret.\n`,
    );
    return 0;
  }

  const source = positionals[0];
  if (source === undefined || positionals.length > 1) throw new UsageError("import takes one file (or -)");
  refuseReadableByOthers(source, source === "-" ? io.redirectedFileMode(0) : fs.statSync(source).mode);
  const text = Buffer.from(source === "-" ? await io.stdin() : await io.readFile(source)).toString("utf8");
  const keyring = parseKeyring(text); // refuses a malformed file before anything is written
  const body = [
    "# Doorbell seal keys, imported. The first key seals new values; the others only open old ones.",
    "# Keep this file secret (mode 0600), the same on every process of one database, and back it up.",
    keyLines(text),
    "",
  ].join("\n");
  if (fs.existsSync(keyFile)) {
    const existing = fs.readFileSync(keyFile, "utf8");
    if (keyLines(existing) === keyLines(text)) {
      io.stdout(`${keyFile} already holds these keys.\n`);
      return 0;
    }
    if (!values.replace) {
      throw new Error(
        `${keyFile} holds other keys; values sealed with them would be lost: pass --replace to keep it as a backup and import`,
      );
    }
    fs.renameSync(keyFile, `${keyFile}.replaced-${io.now()}`);
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const temp = `${keyFile}.${process.pid}.tmp`;
  const fd = fs.openSync(temp, "wx", 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, body);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, keyFile);
  io.stdout(
    `imported ${keyring.keyIds.length} seal key(s) into ${keyFile} (current: ${keyring.currentKeyId}).\n`,
  );
  return 0;
}

/** Keys that other users could read are no longer secret: importing them would hide that. */
function refuseReadableByOthers(source: string, fileMode: number | undefined): void {
  if (fileMode === undefined) return; // a pipe or a terminal
  const mode = fileMode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `${source === "-" ? "stdin's file" : source} can be read by other users (mode ${modeText(mode)}): its keys may be known; chmod 600 it if they are not, or pipe them: doorbell keys export | doorbell keys import -`,
    );
  }
}

function modeText(mode: number): string {
  return `0${mode.toString(8).padStart(3, "0")}`;
}

/** The key entries of a key file or variable, one per line, without comments. */
function keyLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .flatMap((line) => line.split(","))
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .join("\n");
}
