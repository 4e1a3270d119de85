/**
 * `doorbell endpoints list|show|enable`: each doorbell subscription's endpoint health, read from
 * the holder's database beside a running holder (like `doorbell deliveries`). Attempts by result
 * over the last one to two days, the last error's category, the time since the last success, and
 * whether it was disabled for failing too long. `enable` resumes a disabled MCP Events endpoint; a
 * push subscription that ended stays ended (push profile §6 rule 5): its agent subscribes again.
 * Never an endpoint's URL or secret.
 */
import {
  type Channel,
  DeliveryError,
  type DeliveryLogEntry,
  type EndpointHealth,
  enableEndpoint,
  HEALTH_WINDOW_MS,
  listDeliveries,
  showDelivery,
} from "@doorbell/delivery";
import { type Io, UsageError } from "../io.js";
import { listLimit, openLog } from "./deliveries.js";
import { ENV } from "./holder-config.js";
import { parseSubcommand } from "./lifecycle.js";

export const ENDPOINTS_USAGE = `doorbell endpoints list [--disabled] [--channel C] [--limit N] [--json]
doorbell endpoints show SUBSCRIPTION_ID [--json]
doorbell endpoints enable SUBSCRIPTION_ID
               [--data-dir .doorbell] [--database postgres://…]

Each doorbell subscription's endpoint health: attempts that succeeded and failed since the start
of yesterday (UTC), the last error's category, the time since the last success, and whether it was
disabled for failing every attempt too long (doorbell serve --endpoint-disable-after, default 5
days). A disabled push subscription has ended (push profile rule 5): its agent subscribes again.
A disabled MCP Events subscription is suspended until its client refreshes or you enable it.
  --disabled      only endpoints disabled and not recovered since
  --channel C     push, mcp, mcp-standard or operator (the operator webhook itself)
  --limit N       at most N endpoints (default 50)
  --json          the same as JSON
enable resumes a disabled or suspended MCP Events endpoint: its waiting events are retried now,
and it has the whole --endpoint-disable-after again. Its recovery is announced at its first success.
  --data-dir, --database   the holder's database, as for doorbell serve (${ENV.dataDir}, ${ENV.database})`;

const options = {
  "data-dir": { type: "string" },
  database: { type: "string" },
  disabled: { type: "boolean" },
  channel: { type: "string" },
  limit: { type: "string" },
  json: { type: "boolean" },
} as const;

const CHANNELS: readonly Channel[] = ["push", "mcp", "mcp-standard", "operator"];

export async function endpointsCommand(args: readonly string[], io: Io): Promise<number> {
  const { action, values, positionals } = parseSubcommand(
    args,
    "endpoints",
    ["list", "show", "enable"] as const,
    options,
  );
  const id = positionals[0];
  if (action === "list" && positionals.length > 0) throw new UsageError("list takes no id");
  if (action !== "list" && (id === undefined || positionals.length > 1)) {
    throw new UsageError(`${action} takes one subscription id (sub_… or the id the agent knows)`);
  }
  const channel = values.channel;
  if (channel !== undefined && !CHANNELS.includes(channel as Channel)) {
    throw new UsageError(`--channel is one of ${CHANNELS.join(", ")}, not ${JSON.stringify(channel)}`);
  }
  const limit = listLimit(values.limit);

  const store = await openLog(values, io);
  try {
    const now = io.now();
    if (action === "list") {
      const entries = await listDeliveries(store.db, {
        ...(channel === undefined ? {} : { channels: [channel as Channel] }),
        ...(values.disabled ? { disabled: true } : {}),
        limit,
        now,
      });
      io.stdout(
        values.json ? `${JSON.stringify(entries.map(jsonEndpoint), null, 2)}\n` : listText(entries, now),
      );
      return 0;
    }
    if (action === "show") {
      const entry = await showDelivery(store.db, id as string, 0, now).catch((error: unknown) => {
        if (error instanceof DeliveryError && error.code === "ERR_DELIVERY_UNKNOWN_SUBSCRIPTION") {
          throw new DeliveryError(
            error.code,
            `no endpoint ${JSON.stringify(id)}: doorbell endpoints list shows their subscription ids`,
          );
        }
        throw error;
      });
      io.stdout(values.json ? `${JSON.stringify(jsonEndpoint(entry), null, 2)}\n` : showText(entry, now));
      return 0;
    }
    const enabled = await enableEndpoint(store, id as string, { clock: io.now });
    io.stdout(
      enabled.resumed
        ? `enabled ${enabled.subscriptionId}: delivery resumes and its waiting events are retried now; the running holder sends them. Follow it with doorbell endpoints show ${enabled.subscriptionId}.\n`
        : `${enabled.subscriptionId} is not suspended: nothing to enable.\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

const iso = (ms: number | null) => (ms === null ? "—" : new Date(ms).toISOString().replace(".000Z", "Z"));

function ago(ms: number | null): string {
  if (ms === null) return "never";
  const seconds = Math.round(ms / 1000);
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

function stateWord(entry: DeliveryLogEntry): string {
  const h = entry.health;
  if (h.state === "disabled") return `disabled ${iso(h.disabledAt)} (${h.disabledReason ?? "?"})`;
  if (h.state === "ended") return `ended (${entry.endedReason ?? "?"})`;
  if (h.state === "failing") return `failing since ${iso(h.failingSince)}`;
  return h.state;
}

function listText(entries: readonly DeliveryLogEntry[], now: number): string {
  if (entries.length === 0) return "No endpoints.\n";
  const rows = entries.map((e) => [
    e.id,
    e.channel,
    stateWord(e),
    String(e.health.successes),
    String(e.health.failures),
    e.health.lastErrorCategory ?? "—",
    ago(e.health.sinceLastSuccessMs),
  ]);
  const header = ["SUBSCRIPTION", "CHANNEL", "STATE", "OK", "FAILED", "LAST ERROR", "LAST SUCCESS"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd()}\n`;
  const since = iso(entries[0]?.health.windowStart ?? now - HEALTH_WINDOW_MS);
  return `${line(header) + rows.map(line).join("")}OK and FAILED count attempts since ${since}.\n`;
}

function showText(entry: DeliveryLogEntry, now: number): string {
  const h = entry.health;
  const lines = [
    `Endpoint of ${entry.id} (${entry.channel}; the agent knows it as ${entry.subscriberId})`,
    `  State           ${stateWord(entry)}`,
    `  Attempts        ${h.successes} succeeded, ${h.failures} failed since ${iso(h.windowStart)}`,
    `  Last success    ${h.lastSuccessAt === null ? "never" : `${iso(h.lastSuccessAt)} (${ago(h.sinceLastSuccessMs)})`}`,
    `  Last failure    ${h.lastFailureAt === null ? "none" : `${iso(h.lastFailureAt)} (${ago(now - h.lastFailureAt)})`}`,
    `  Last error      ${h.lastErrorCategory ?? "none since the last success"}`,
    `  Failing since   ${h.failingSince === null ? "—" : iso(h.failingSince)}`,
    `  Queued          ${entry.queued}; dead letters ${entry.deadLetters} (doorbell deliveries show ${entry.id})`,
    ...disabledLines(entry),
    "",
  ];
  return lines.join("\n");
}

function disabledLines(entry: DeliveryLogEntry): string[] {
  const h = entry.health;
  if (h.disabledAt === null) return [];
  const what =
    entry.channel === "push"
      ? "  Ended for good (push profile rule 5): the agent must subscribe again."
      : h.state === "disabled"
        ? `  Suspended until its client refreshes, or: doorbell endpoints enable ${entry.id}`
        : "  Enabled again; its recovery is announced at its first success.";
  return [`  Disabled        ${iso(h.disabledAt)} (${h.disabledReason ?? "?"})`, what];
}

/** What --json prints: the health with ISO times; never a URL or secret (the log has none). */
const jsonEndpoint = (entry: DeliveryLogEntry) => ({
  id: entry.id,
  channel: entry.channel,
  subscriberId: entry.subscriberId,
  status: entry.status,
  endedReason: entry.endedReason,
  queued: entry.queued,
  deadLetters: entry.deadLetters,
  health: jsonHealth(entry.health),
});

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const jsonHealth = (h: EndpointHealth) => ({
  state: h.state,
  windowStart: isoOrNull(h.windowStart),
  successes: h.successes,
  failures: h.failures,
  lastErrorCategory: h.lastErrorCategory,
  lastSuccessAt: isoOrNull(h.lastSuccessAt),
  sinceLastSuccessSeconds: h.sinceLastSuccessMs === null ? null : Math.round(h.sinceLastSuccessMs / 1000),
  lastFailureAt: isoOrNull(h.lastFailureAt),
  failingSince: isoOrNull(h.failingSince),
  disabledAt: isoOrNull(h.disabledAt),
  disabledReason: h.disabledReason,
});
