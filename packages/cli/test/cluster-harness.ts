/**
 * What the multi-process tests and the soak script (scripts/soak.ts) share (issue 14): `doorbell`
 * processes started from the sources with their output collected, a real SMTP server and the
 * agents' doorbell receiver on loopback, and a browser without rendering for the pages.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createReceiver, toNodeHandler } from "@doorbell/webhooks";
import { SMTPServer } from "smtp-server";

const ENTRY = path.join(import.meta.dirname, "cli-entry.ts");

// ---- processes ---------------------------------------------------------------------------------

export { freePort } from "@doorbell/store/testing";

export interface Started {
  name: string;
  child: ChildProcess;
  out: { text: string; errors: string };
  exited: Promise<number | null>;
  /** Resolves when stdout contains `text`; fails at once if the process ends, or after `ms`. */
  waitFor(text: string | RegExp, ms?: number): Promise<void>;
}
export const started: Started[] = [];
export const everything = () =>
  started.map((p) => `=== ${p.name}\n${p.out.text}\n--- stderr ---\n${p.out.errors.slice(-4000)}`).join("\n");

/**
 * With DOORBELL_PROFILE_DIR set (the soak, by hand), each process writes a V8 CPU profile there
 * when it exits, named after it: node refuses --cpu-prof in NODE_OPTIONS, so it is passed here.
 */
const profiling = (name: string): string[] => {
  const dir = process.env.DOORBELL_PROFILE_DIR;
  return dir
    ? ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name.replace(/\W+/g, "-")}.cpuprofile`]
    : [];
};

/** The CLI as built and shipped (`npm run build`), for runs that measure the product. */
export const BUILT_CLI = path.join(import.meta.dirname, "..", "bin", "doorbell.js");

/**
 * One `doorbell …` process, its output collected: from the sources (or another script, `script`),
 * or, `from: "built"`, running the built packages as users do (a TypeScript script then still goes
 * through tsx, but imports the packages' built output).
 */
export function doorbell(
  name: string,
  args: string[],
  env: Record<string, string>,
  script = ENTRY,
  from: "sources" | "built" = "sources",
): Started {
  const loader =
    from === "sources"
      ? ["--import", "tsx", "--conditions=@doorbell/source"]
      : script.endsWith(".ts")
        ? ["--import", "tsx"]
        : [];
  const child = spawn(process.execPath, [...profiling(name), ...loader, script, ...args], {
    env: { ...process.env, DOORBELL_LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn", ...env },
  });
  const out = { text: "", errors: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    out.text += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    out.errors += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const entry: Started = {
    name,
    child,
    out,
    exited,
    async waitFor(text, ms = 60_000) {
      await until(
        `${typeof text === "string" ? `"${text}"` : String(text)} from ${name}`,
        () => {
          if (typeof text === "string" ? out.text.includes(text) : text.test(out.text)) return true;
          // A process that ended will never print it: fail now, with its output.
          if (child.exitCode !== null)
            throw new Error(`${name} exited with ${child.exitCode}\n${everything()}`);
          return false;
        },
        ms,
      );
    },
  };
  started.push(entry);
  return entry;
}

/** Polls `check` until it holds; fails after `ms` with every process's output. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${everything()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * How many established TCP connections process `pid` has to 127.0.0.1:`port` (Linux /proc: the
 * process's socket inodes matched against the connection table), to tell which process has
 * doorbells in flight.
 */
export function connectedTo(pid: number | undefined, port: number): number {
  if (pid === undefined) return 0;
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remotePort = Number.parseInt(fields[2]?.split(":")[1] ?? "", 16);
      // State 01 is ESTABLISHED; field 9 is the socket's inode.
      if (remotePort === port && fields[3] === "01" && fields[9] !== undefined) inodes.add(fields[9]);
    }
  }
  let count = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? "")) count++;
    } catch {} // a descriptor closed while we looked
  }
  return count;
}

// ---- mail: a real SMTP server on loopback --------------------------------------------------------

export interface Mail {
  to: string;
  /** The raw message with quoted-printable soft breaks and `=3D` undone: links read whole. */
  text: string;
}

/** A real SMTP server on loopback; mails `keep` refuses (the soak's digests) are counted only. */
export async function startSmtp(keep: (mail: Mail) => boolean = () => true) {
  const mails: Mail[] = [];
  const counted = { all: 0 };
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const text = raw.replace(/=\r?\n/g, "").replace(/=3D/gi, "=");
        for (const to of session.envelope.rcptTo) {
          counted.all++;
          const mail = { to: to.address, text };
          if (keep(mail)) mails.push(mail);
        }
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    counted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- the agents' doorbell receiver -------------------------------------------------------------

export interface Arrival {
  /** The receiver path: one per subscription. */
  path: string;
  webhookId: string;
  type: string;
  body: string;
}
export interface Verified extends Arrival {
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The agents' endpoint: the real `@doorbell/webhooks` receiver (signature, timestamp, webhook-id
 * dedup, challenges answered). Every request is recorded raw as it arrives (duplicates included);
 * each verified doorbell once. While `hold` is set, verified doorbells wait unanswered until
 * `release()`: the sending process has them in flight.
 */
export async function startReceiver(secret: string) {
  const arrivals: Arrival[] = [];
  const verified: Verified[] = [];
  const held = new Set<() => void>();
  const control = { hold: false };
  const receiver = createReceiver({
    keys: { secrets: [secret] },
    async handler(event) {
      const json = event.json as { type: string; timestamp: string; data: Record<string, unknown> };
      const url = event.headers.get("x-test-path") ?? "";
      verified.push({
        path: url,
        webhookId: event.id,
        type: json.type,
        timestamp: json.timestamp,
        data: json.data,
        body: Buffer.from(event.body).toString("utf8"),
      });
      if (control.hold) await new Promise<void>((resolve) => held.add(resolve));
    },
  });
  const handle = toNodeHandler(receiver);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let type = "";
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? "";
      } catch {}
      arrivals.push({ path: req.url ?? "", webhookId: String(req.headers["webhook-id"] ?? ""), type, body });
    });
    // The handler sees the path through a header of our own (the receiver gets a Request).
    req.headers["x-test-path"] = req.url ?? "";
    handle(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (name: string) => `http://127.0.0.1:${port}/d/${name}`,
    arrivals,
    verified,
    control,
    held: () => held.size,
    release() {
      control.hold = false;
      for (const resolve of held) resolve();
      held.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A browser without rendering: cookies kept, forms posted as a same-origin page would. */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly origin: string) {}

  async request(url: string, init: RequestInit = {}): Promise<{ status: number; html: string }> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(new URL(url, this.origin), { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      if (at > 0) this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    return { status: response.status, html: await response.text() };
  }

  /** GETs the form page, then posts `fields` with its csrf token to `action` (default: the page). */
  async submit(page: string, fields: Record<string, string>, action = page) {
    const form = await this.request(page);
    if (form.status !== 200) throw new Error(`${page} answered ${form.status}`);
    const hidden = (name: string) =>
      new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(form.html)?.[1] ??
      new RegExp(`<input[^>]*value="([^"]*)"[^>]*name="${name}"`).exec(form.html)?.[1];
    const body = new URLSearchParams({ csrf: hidden("csrf") ?? "", ...fields });
    const consentVersion = hidden("consentVersion");
    if (consentVersion !== undefined && !body.has("consentVersion"))
      body.set("consentVersion", consentVersion);
    return this.request(action, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "null",
        "sec-fetch-site": "same-origin",
      },
      body: body.toString(),
    });
  }
}
