/**
 * `doorbell deliveries list|show|replay|prune`: the operator's delivery log, read from the
 * holder's database beside a running holder. Per subscription: its status, the next attempt, what
 * is queued, the recent failed attempts with their category and time, and the doorbells given up
 * on, which `replay` sends again; `prune` deletes what is past its age, as the running holder does
 * every hour. Never a secret or an endpoint: nothing beyond what the doorbells themselves carry.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import {
  type DeliveryLogEntry,
  type DeliveryTables,
  deliveryMigrations,
  listDeliveries,
  type PruneResult,
  pruneDeliveries,
  replayDeadLetter,
  type SubscriptionLog,
  type SubscriptionStatus,
  showDelivery,
} from "@doorbell/delivery";
import { type Database, migrate, openDatabase } from "@doorbell/store";
import { type Io, UsageError } from "../io.js";
import { ENV, retentionSettings } from "./holder-config.js";
import { parseSubcommand } from "./lifecycle.js";

export const DELIVERIES_USAGE = `doorbell deliveries list [--status S] [--dead] [--limit N] [--json]
doorbell deliveries show SUBSCRIPTION_ID [--json]
doorbell deliveries replay DEAD_LETTER_ID
doorbell deliveries prune [--dry-run] [--older-than DAYS] [--dead-letters-older-than DAYS]
               [--data-dir .doorbell] [--database postgres://…]

The holder's delivery log: each doorbell subscription's status, next attempt, queue, recent
failed attempts (category and time) and the doorbells given up on (dead letters). replay puts a
dead letter back in its subscription's queue (same webhook-id, same body, new signature); the
running holder sends it. A subscription that ended takes nothing more: its agent subscribes again.
  --status S      pending_verification, awaiting_approval, active or ended
  --dead          only subscriptions with a dead letter not yet replayed
  --limit N       at most N subscriptions (default 50)
  --json          the same as JSON
prune deletes failed attempts and replayed dead letters older than --older-than (default 30
days, or --retention-days's ${ENV.retentionDays}) and dead letters never replayed older than
--dead-letters-older-than (default 90, or ${ENV.deadLetterDays}), in small batches; the running
holder does the same every hour. Delivered doorbells leave no rows to prune.
  --dry-run       count what would be deleted; delete nothing
  --data-dir, --database   the holder's database, as for doorbell serve (${ENV.dataDir}, ${ENV.database})`;

const options = {
  "data-dir": { type: "string" },
  database: { type: "string" },
  status: { type: "string" },
  dead: { type: "boolean" },
  limit: { type: "string" },
  json: { type: "boolean" },
  "dry-run": { type: "boolean" },
  "older-than": { type: "string" },
  "dead-letters-older-than": { type: "string" },
} as const;

const STATUSES: readonly SubscriptionStatus[] = [
  "pending_verification",
  "awaiting_approval",
  "active",
  "ended",
];

export async function deliveriesCommand(args: readonly string[], io: Io): Promise<number> {
  const { action, values, positionals } = parseSubcommand(
    args,
    "deliveries",
    ["list", "show", "replay", "prune"] as const,
    options,
  );
  const id = positionals[0];
  if ((action === "list" || action === "prune") && positionals.length > 0) {
    throw new UsageError(`${action} takes no id`);
  }
  if (action === "prune") return prune(values, io);
  if (action !== "list" && (id === undefined || positionals.length > 1)) {
    throw new UsageError(
      `${action} takes one ${action === "show" ? "subscription id" : "dead letter id (dlq_…)"}`,
    );
  }
  const status = values.status;
  if (status !== undefined && !STATUSES.includes(status as SubscriptionStatus)) {
    throw new UsageError(`--status is one of ${STATUSES.join(", ")}, not ${JSON.stringify(status)}`);
  }
  const limit = listLimit(values.limit);

  const store = await openLog(values, io);
  try {
    if (action === "list") {
      const entries = await listDeliveries(store.db, {
        ...(status === undefined ? {} : { status: status as SubscriptionStatus }),
        ...(values.dead ? { withDeadLetters: true } : {}),
        limit,
      });
      io.stdout(
        values.json ? `${JSON.stringify(entries.map(jsonEntry), null, 2)}\n` : listText(entries, io.now()),
      );
      return 0;
    }
    if (action === "show") {
      const log = await showDelivery(store.db, id as string);
      io.stdout(values.json ? `${JSON.stringify(jsonLog(log), null, 2)}\n` : showText(log, io.now()));
      return 0;
    }
    const replayed = await replayDeadLetter(store, id as string, { clock: io.now });
    io.stdout(
      `replayed ${replayed.deadLetterId}: ${replayed.type} (webhook-id ${replayed.webhookId}) is queued again for ${replayed.subscriptionId}` +
        `${replayed.resumed ? "; its suspended delivery is resumed" : ""}.\n` +
        "The running holder sends it; follow it with doorbell deliveries show " +
        `${replayed.subscriptionId}.\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** Days given as N or Nd, for the flags of prune. */
const daysFlag = (value: string | undefined): string | undefined => value?.trim().replace(/d$/i, "");

async function prune(
  values: {
    "data-dir"?: string | undefined;
    database?: string | undefined;
    "dry-run"?: boolean | undefined;
    "older-than"?: string | undefined;
    "dead-letters-older-than"?: string | undefined;
  },
  io: Io,
): Promise<number> {
  // The same settings, variables and checks as doorbell serve's --retention-days and --dead-letter-days.
  let ages: ReturnType<typeof retentionSettings>;
  try {
    ages = retentionSettings(
      {
        "retention-days": daysFlag(values["older-than"]),
        "dead-letter-days": daysFlag(values["dead-letters-older-than"]),
      },
      io,
    );
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    throw new UsageError(
      error.message
        .replace("--retention-days", "--older-than")
        .replace("--dead-letter-days", "--dead-letters-older-than"),
    );
  }
  const store = await openLog(values, io);
  try {
    const result = await pruneDeliveries(store.db, {
      now: io.now(),
      maxAgeMs: ages.maxAgeMs,
      deadLetterMaxAgeMs: ages.deadLetterMaxAgeMs,
      dryRun: values["dry-run"] === true,
    });
    io.stdout(pruneText(result));
    return 0;
  } finally {
    await store.close();
  }
}

function pruneText(result: PruneResult): string {
  const verb = result.dryRun ? "would delete" : "deleted";
  const lines = [
    `${result.dryRun ? "Dry run: nothing is deleted." : "Pruned."}`,
    `  delivery_attempt_log   ${verb} ${result.deleted.delivery_attempt_log} failed attempt(s) before ${iso(result.attemptsBefore)}`,
    `  delivery_dead_letters  ${verb} ${result.deleted.delivery_dead_letters} dead letter(s) given up on before ${iso(result.deadLettersBefore)} or replayed before ${iso(result.replayedBefore)}`,
    "",
  ];
  return lines.join("\n");
}

/** The holder's database with the delivery tables, for the commands that read them beside a running holder. */
/** `--limit N` of a list: 1 to 10,000 rows, 50 when not given. */
export function listLimit(value: string | undefined): number {
  const limit = value === undefined ? 50 : Number(value);
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= 10_000)) {
    throw new UsageError(`--limit is a whole number from 1 to 10000, not ${JSON.stringify(value)}`);
  }
  return limit;
}

export async function openLog(
  values: { "data-dir"?: string | undefined; database?: string | undefined },
  io: Io,
): Promise<Database<DeliveryTables>> {
  const given = values.database?.trim() || io.env[ENV.database]?.trim();
  const dataDir = path.resolve(values["data-dir"]?.trim() || io.env[ENV.dataDir]?.trim() || ".doorbell");
  const url = given || path.join(dataDir, "holder.sqlite");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^postgres(ql)?:\/\//i.test(url)) {
    throw new UsageError("--database takes a postgres:// URL or a SQLite file path");
  }
  if (!/^postgres(ql)?:\/\//i.test(url) && !existsSync(url)) {
    // Opening would create an empty database: say where we looked instead.
    throw new Error(`no holder database at ${url}: give --data-dir or --database as for doorbell serve`);
  }
  const store = await openDatabase<DeliveryTables>({ url });
  try {
    // Additive only: a newer CLI beside an older holder adds the log's tables.
    await migrate(store, [deliveryMigrations]);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

const iso = (ms: number | null) => (ms === null ? "—" : new Date(ms).toISOString().replace(".000Z", "Z"));

function relative(ms: number | null, now: number): string {
  if (ms === null) return "—";
  const seconds = Math.round((ms - now) / 1000);
  const size = Math.abs(seconds);
  const amount =
    size < 90
      ? `${size} s`
      : size < 90 * 60
        ? `${Math.round(size / 60)} min`
        : size < 36 * 3600
          ? `${Math.round(size / 3600)} h`
          : `${Math.round(size / 86_400)} d`;
  return `${iso(ms)} (${seconds >= 0 ? `in ${amount}` : `${amount} ago`})`;
}

function statusWord(entry: DeliveryLogEntry): string {
  if (entry.status === "ended") return `ended (${entry.endedReason ?? "?"})`;
  if (!entry.deliveryActive) return `${entry.status}, delivery suspended`;
  return entry.status;
}

function listText(entries: readonly DeliveryLogEntry[], now: number): string {
  if (entries.length === 0) return "No doorbell subscriptions.\n";
  const rows = entries.map((e) => [
    e.id,
    e.channel,
    statusWord(e),
    e.lastDeliveryAt === null ? "never" : iso(e.lastDeliveryAt),
    e.lastError ?? "—",
    e.status === "ended" ? "—" : relative(e.nextAttemptAt, now),
    String(e.queued),
    String(e.deadLetters),
  ]);
  const header = [
    "SUBSCRIPTION",
    "CHANNEL",
    "STATUS",
    "LAST DELIVERED",
    "LAST ERROR",
    "NEXT ATTEMPT",
    "QUEUED",
    "DEAD",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `${cells
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd()}\n`;
  return line(header) + rows.map(line).join("");
}

function showText(log: SubscriptionLog, now: number): string {
  const out = [
    `Subscription ${log.id} (${log.channel}; the agent knows it as ${log.subscriberId})`,
    `  Status          ${statusWord(log)}`,
    `  Created         ${iso(log.createdAt)}; lease until ${iso(log.expiresAt)}`,
    `  Last delivered  ${log.lastDeliveryAt === null ? "never" : relative(log.lastDeliveryAt, now)}`,
    `  Failing         ${log.failedSince === null ? "no" : `since ${iso(log.failedSince)} (${log.lastError ?? "?"})`}`,
    `  Next attempt    ${log.status === "ended" && log.queued === 0 ? "none (ended)" : relative(log.nextAttemptAt, now)}`,
    "",
    `Queued (${log.queued})`,
    ...(log.queue.length === 0
      ? ["  nothing"]
      : log.queue.map(
          (q) =>
            `  ${q.webhookId}  ${q.type}  ${q.attempts} attempt(s) so far, next ${relative(q.nextAttemptAt, now)}`,
        )),
    "",
    "Recent failed attempts (newest first)",
    ...(log.attempts.length === 0
      ? ["  none"]
      : log.attempts.map(
          (a) =>
            `  ${iso(a.at)}  ${a.kind.padEnd(9)} #${a.attempt}  ${a.category}${a.httpStatus === null ? "" : ` (HTTP ${a.httpStatus})`}  ${a.type}${a.webhookId === null ? "" : ` ${a.webhookId}`}`,
        )),
    "",
    "Dead letters (doorbells given up on)",
    ...(log.deadLetterList.length === 0
      ? ["  none"]
      : log.deadLetterList.flatMap((d) => [
          `  ${d.id}  ${d.type}  ${d.reason} after ${d.attempts} attempt(s), last ${iso(d.lastAttemptAt)} (${d.category})` +
            (d.replayedAt === null ? "" : `, replayed ${iso(d.replayedAt)}`),
          `    webhook-id ${d.webhookId}`,
          `    body ${d.body}`,
        ])),
    "",
  ];
  return `${out.join("\n")}`;
}

const jsonEntry = (e: DeliveryLogEntry) => ({
  ...e,
  lastDeliveryAt: isoOrNull(e.lastDeliveryAt),
  failedSince: isoOrNull(e.failedSince),
  nextAttemptAt: isoOrNull(e.nextAttemptAt),
  createdAt: isoOrNull(e.createdAt),
  expiresAt: isoOrNull(e.expiresAt),
});

const jsonLog = (log: SubscriptionLog) => ({
  ...jsonEntry(log),
  attempts: log.attempts.map((a) => ({ ...a, at: isoOrNull(a.at) })),
  queue: log.queue.map((q) => ({
    ...q,
    nextAttemptAt: isoOrNull(q.nextAttemptAt),
    createdAt: isoOrNull(q.createdAt),
  })),
  deadLetterList: undefined,
  deadLetters: log.deadLetterList.map((d) => ({
    ...d,
    firstAttemptAt: isoOrNull(d.firstAttemptAt),
    lastAttemptAt: isoOrNull(d.lastAttemptAt),
    replayedAt: isoOrNull(d.replayedAt),
  })),
});

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
