/**
 * Subscription records as one JSON file (mode 0600: it holds webhook secrets and subscription ids).
 * Every change writes a new file beside it, fsyncs it and renames it over the old one, so a crash
 * leaves the old records or the new ones, never half. Writes are serialised in call order.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { readPrivateFile, writeFileAtomically } from "@doorbell/webhooks";
import { z } from "zod";
import { EventsClientError } from "../errors.js";
import type { CursorStore, SubscriptionRecord } from "./store.js";

const MODE = 0o600;

const recordSchema = z.object({
  cursor: z.string().nullable(),
  recentEventIds: z.array(z.string()).optional(),
  webhook: z
    .object({ id: z.string().optional(), route: z.string(), secret: z.string().optional() })
    .optional(),
});
const fileSchema = z.object({
  version: z.literal(1),
  subscriptions: z.record(z.string(), recordSchema),
});

export async function createFileCursorStore(file: string): Promise<CursorStore> {
  const target = path.resolve(file);
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 }).catch((error: Error) => {
    throw stateError(`cannot create the folder of ${target}: ${error.message}`);
  });
  const records = await load(target);
  let writing: Promise<void> = Promise.resolve();

  const persist = (): Promise<void> => {
    const snapshot = JSON.stringify({ version: 1, subscriptions: Object.fromEntries(records) });
    const next = writing.then(() => write(target, snapshot));
    writing = next.catch(() => {});
    return next;
  };

  return {
    async get(key) {
      const record = records.get(key);
      return record === undefined ? undefined : structuredClone(record);
    },
    async set(key, record) {
      records.set(key, structuredClone(record));
      await persist();
    },
    async delete(key) {
      if (!records.delete(key)) return;
      await persist();
    },
    async close() {
      await writing;
    },
  };
}

async function load(target: string): Promise<Map<string, SubscriptionRecord>> {
  let text: string | undefined;
  try {
    text = await readPrivateFile(target, { mode: MODE });
  } catch (error) {
    throw stateError(`cannot read the cursor file ${target}: ${(error as Error).message}`);
  }
  if (text === undefined) return new Map();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw stateError(`the cursor file ${target} is not JSON; move it aside to start afresh`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw stateError(
      `the cursor file ${target} is not an MCP Events cursor file (${issue?.path.join(".") || "top level"}: ${issue?.message ?? "invalid"})`,
    );
  }
  return new Map(Object.entries(parsed.data.subscriptions) as [string, SubscriptionRecord][]);
}

async function write(target: string, text: string): Promise<void> {
  try {
    await writeFileAtomically(target, `${text}\n`, { mode: MODE });
  } catch (error) {
    throw stateError(`cannot write the cursor file ${target}: ${(error as Error).message}`);
  }
}

const stateError = (message: string) => new EventsClientError("ERR_EVENTS_STATE", message);
