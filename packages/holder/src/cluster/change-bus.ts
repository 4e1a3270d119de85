import { randomBytes } from "node:crypto";
import type { Database } from "@doorbell/store";
import type { Logger } from "pino";
import type { IntentChangeListener } from "../events/feed.js";

/** The channel on which processes tell each other what changed (PostgreSQL NOTIFY, SQLite's table). */
export const CHANGES_CHANNEL = "doorbell_changes";

/** Ids per notification: far inside the 8000-byte payload with ids of up to 64 characters. */
const IDS_PER_MESSAGE = 100;

/**
 * One message on the bus: new matches of intents (`m`), a status change of an intent (`s`), or
 * push subscriptions whose resource changed (`p`); `o` names the process that sent it.
 */
interface Message {
  o: string;
  m?: string[];
  s?: string;
  p?: string[];
}

/** Who hears what the bus carries, in each process. */
export interface ChangeBusListeners {
  /** MCP Events: wakes the subscriptions of these intents (in this process and the stored ones). */
  intents: IntentChangeListener;
  /** MCP Events: notifications may have been missed (a lost connection): wake every subscription. */
  resync(): void;
}

/** The push service's side: its resource change listeners (push profile §8.3). */
export interface PushChanges {
  onChange(listener: (subscriptionIds: readonly string[]) => void): () => void;
  /** Fires this process's listeners with another process's change. */
  relay(subscriptionIds: readonly string[]): void;
}

export interface ChangeBus {
  /** The services' feed: told here at once, and to every other process on the database. */
  readonly changes: IntentChangeListener;
  /** Push subscription resources changed here are told to the other processes, and theirs here. */
  follow(push: PushChanges): void;
  /** Stops listening once what was told has gone out. */
  stop(): Promise<void>;
}

/**
 * A change committed by any process (an import, a consent, a withdrawal, a match on another
 * replica) reaches every process that serves a subscriber at once: this process's listeners are
 * told directly; the others through `store.notify`, which on PostgreSQL is NOTIFY on one listening
 * connection per process and on SQLite a row the other processes see within tens of
 * milliseconds. A process skips its own messages (it told itself already). After a lost
 * connection the listeners resync, since messages may have been missed.
 *
 * Only ids travel, as the change feed's listeners read what changed themselves.
 */
export async function startChangeBus(options: {
  store: Database;
  listeners?: ChangeBusListeners;
  log: Logger;
}): Promise<ChangeBus> {
  const { store, listeners, log } = options;
  const origin = randomBytes(9).toString("base64url");
  const sending = new Set<Promise<void>>();
  const send = (message: Omit<Message, "o">) => {
    const sent = store.notify(CHANGES_CHANNEL, JSON.stringify({ o: origin, ...message })).then(
      () => {},
      (error: Error) =>
        log.warn({ event: "changes.publish_failed", error: error.name }, "telling other processes failed"),
    );
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
  };
  const sendIds = (kind: "m" | "p", ids: readonly string[]) => {
    for (let i = 0; i < ids.length; i += IDS_PER_MESSAGE) send({ [kind]: ids.slice(i, i + IDS_PER_MESSAGE) });
  };

  let push: PushChanges | undefined;
  // While another process's change is relayed to the listeners, it is not sent back out.
  let relaying = false;
  const heard = (payload?: string) => {
    if (listeners === undefined) return;
    if (payload === undefined) return listeners.resync();
    const message = parse(payload);
    if (message === undefined || message.o === origin) return;
    if (message.m) listeners.intents.matchesRecorded(message.m);
    if (message.s !== undefined) listeners.intents.statusChanged(message.s);
    if (message.p && push) {
      relaying = true;
      try {
        push.relay(message.p);
      } finally {
        relaying = false;
      }
    }
  };
  let unfollow = () => {};
  const unlisten = listeners === undefined ? async () => {} : await store.listen(CHANGES_CHANNEL, heard);

  return {
    changes: {
      matchesRecorded(intentIds) {
        listeners?.intents.matchesRecorded(intentIds);
        sendIds("m", intentIds);
      },
      statusChanged(intentId) {
        listeners?.intents.statusChanged(intentId);
        send({ s: intentId });
      },
    },
    follow(followed) {
      push = followed;
      const stop = followed.onChange((ids) => {
        if (!relaying) sendIds("p", ids);
      });
      unfollow = () => stop();
    },
    async stop() {
      unfollow();
      await Promise.all(sending);
      await unlisten();
    },
  };
}

/** A message of this bus, or undefined for anything else (never trusted further than its shape). */
function parse(payload: string): Message | undefined {
  try {
    const value = JSON.parse(payload) as Message;
    const ids = (list: unknown) =>
      list === undefined || (Array.isArray(list) && list.every((id) => typeof id === "string"));
    if (typeof value?.o !== "string" || !ids(value.m) || !ids(value.p)) return undefined;
    if (value.s !== undefined && typeof value.s !== "string") return undefined;
    return value;
  } catch {
    return undefined;
  }
}
