/**
 * The holder client: the binding's buyer tools and the push profile's two tools over MCP
 * (the v2 SDK's Client on Streamable HTTP: 2026-07-28 first, a 2025 session where the holder is
 * older), with §8.2 pacing of reads and one AgentError per refusal.
 *
 *     const holder = await HolderClient.connect({ url: "https://intents.example.sk/mcp" });
 *     const { matches } = await holder.listMatches(code, { since });
 */

import type { PushEvent } from "@doorbell/intents";
import { type FetchLike, scopedSignalFetch } from "@doorbell/mcp-endpoint/client";
import {
  type CallToolResult,
  Client,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { type Clock, systemClock } from "../clock.js";
import { AgentError, isAgentError } from "../errors.js";
import {
  checkCode,
  checkDeliveryUrl,
  checkEvents,
  checkRelayFor,
  checkSecret,
  checkSince,
  checkSubscriptionId,
} from "./arguments.js";
import { type PaceState, PullPacer } from "./pacer.js";
import {
  hasMoreMatches,
  type Intent,
  intentSchema,
  listMatchesSchema,
  type Match,
  type Published,
  type PushSubscription,
  publishSchema,
  pushSubscriptionSchema,
  readResult,
  withdrawSchema,
} from "./results.js";
import { redact, refusalError } from "./tool-error.js";

export interface HolderClientOptions {
  /** The holder's MCP endpoint, e.g. https://intents.example.sk/mcp. */
  url: string | URL;
  clock?: Clock;
  /** Sends `x-isto-test: 1` with every request: subscriptions made are test ones (push profile §6 rule 9). */
  test?: boolean;
  /** Extra request headers (e.g. authorization for an OAuth holder). */
  headers?: Record<string, string>;
  /** Per-call timeout (default 30 s). */
  timeoutMs?: number;
  /** At least 15 minutes (the default). */
  minPullIntervalMs?: number;
  name?: string;
  version?: string;
  fetch?: FetchLike;
}

export interface ListMatchesResult {
  /** Oldest first; every page of the answer (the holder's `extensions.more`) is followed within one read. */
  matches: Match[];
  /** Push profile §8.2: the holder's hint of when a new match can arrive at the earliest. */
  nextCheckAfter?: string;
}

export interface SubscribeInput {
  url: string;
  secret: string;
  events?: readonly PushEvent[];
  relayFor?: string;
}

const TOOLS = {
  publish: "intent_publish_intent",
  get: "intent_get_intent",
  withdraw: "intent_withdraw_intent",
  list: "intent_list_matches",
  subscribe: "intent_subscribe_events",
  unsubscribe: "intent_unsubscribe_events",
} as const;

/** A read follows `extensions.more` this many pages at most (1,000 matches each on a Doorbell holder). */
const MAX_PAGES = 50;

export class HolderClient {
  readonly url: URL;
  readonly #options: HolderClientOptions;
  readonly #pacer: PullPacer;
  #client: Client | undefined;
  #tools = new Set<string>();
  #connecting: Promise<Client> | undefined;
  #closed = false;

  private constructor(options: HolderClientOptions) {
    this.url = holderUrl(options.url);
    this.#options = options;
    this.#pacer = new PullPacer(options.clock ?? systemClock, options.minPullIntervalMs);
  }

  /** Connects (MCP initialize, then tools/list so the SDK checks every result against its schema). */
  static async connect(options: HolderClientOptions): Promise<HolderClient> {
    const client = new HolderClient(options);
    await client.#session();
    return client;
  }

  /** Whether the holder offers doorbells (push profile: intent_subscribe_events). */
  get supportsPush(): boolean {
    return this.#tools.has(TOOLS.subscribe);
  }

  async publish(input: Record<string, unknown>): Promise<Published> {
    return readResult(TOOLS.publish, publishSchema, await this.#call(TOOLS.publish, input, []));
  }

  async get(code: string): Promise<Intent> {
    const intentCode = checkCode(code);
    return readResult(TOOLS.get, intentSchema, await this.#call(TOOLS.get, { intentCode }, [intentCode]));
  }

  async withdraw(code: string): Promise<{ status: "withdrawn" }> {
    const intentCode = checkCode(code);
    const value = await this.#call(TOOLS.withdraw, { intentCode }, [intentCode]);
    return readResult(TOOLS.withdraw, withdrawSchema, value) as { status: "withdrawn" };
  }

  /**
   * One read of an intent's matches delivered after `since`. Refused with ERR_AGENT_PULL_TOO_EARLY
   * (and `retryAt`) within 15 minutes of the previous read or before the holder's nextCheckAfter,
   * unless a doorbell granted a read (`grantRead`).
   */
  async listMatches(code: string, options: { since?: string } = {}): Promise<ListMatchesResult> {
    const intentCode = checkCode(code);
    let since = checkSince(options.since);
    this.#pacer.take(intentCode);
    const matches: Match[] = [];
    let nextCheckAfter: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const args = since === undefined ? { intentCode } : { intentCode, since };
      const answer = readResult(
        TOOLS.list,
        listMatchesSchema,
        await this.#call(TOOLS.list, args, [intentCode]),
      );
      matches.push(...answer.matches);
      nextCheckAfter = answer.nextCheckAfter ?? nextCheckAfter;
      const last = answer.matches.at(-1);
      if (!hasMoreMatches(answer) || last === undefined) break;
      since = last.deliveredAt;
    }
    if (nextCheckAfter !== undefined) this.#pacer.noteNextCheckAfter(intentCode, Date.parse(nextCheckAfter));
    return nextCheckAfter === undefined ? { matches } : { matches, nextCheckAfter };
  }

  /** When `code` may be read next (epoch ms; now or earlier means at once). */
  nextPullAt(code: string): number {
    return this.#pacer.allowedAt(checkCode(code));
  }

  /** A verified doorbell announced new matches: the next read of `code` may happen at once. */
  grantRead(code: string): void {
    this.#pacer.grant(checkCode(code));
  }

  /** The pacing of `code`, to persist; `restorePacing` puts it back after a restart. */
  pacing(code: string): PaceState | undefined {
    return this.#pacer.state(checkCode(code));
  }

  restorePacing(code: string, state: PaceState | undefined): void {
    this.#pacer.restore(checkCode(code), state);
  }

  /**
   * Push profile §4.1. Renewing is the same call with the same code and url and a new secret: the
   * same subscriptionId comes back with a new lease.
   */
  async subscribe(code: string, input: SubscribeInput): Promise<PushSubscription> {
    const intentCode = checkCode(code);
    const url = checkDeliveryUrl(input.url);
    const secret = checkSecret(input.secret);
    const events = checkEvents(input.events);
    const relayFor = checkRelayFor(input.relayFor);
    await this.#session();
    if (!this.supportsPush) {
      throw new AgentError(
        "ERR_AGENT_NO_PUSH",
        `the holder at ${this.url.origin} does not offer doorbells (no ${TOOLS.subscribe} tool); read matches with intent_list_matches instead`,
      );
    }
    const args = {
      intentCode,
      delivery: { url, secret },
      ...(events === undefined ? {} : { events }),
      ...(relayFor === undefined ? {} : { relayFor }),
    };
    return readResult(
      TOOLS.subscribe,
      pushSubscriptionSchema,
      await this.#call(TOOLS.subscribe, args, [intentCode, secret]),
    );
  }

  async unsubscribe(code: string, subscriptionId: string): Promise<PushSubscription> {
    const intentCode = checkCode(code);
    const args = { intentCode, subscriptionId: checkSubscriptionId(subscriptionId) };
    return readResult(
      TOOLS.unsubscribe,
      pushSubscriptionSchema,
      await this.#call(TOOLS.unsubscribe, args, [intentCode]),
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
  }

  // -------------------------------------------------------------------------------------------

  /** Calls a tool; a session the holder has dropped (idle, restart) is opened again once. */
  async #call(name: string, args: Record<string, unknown>, secrets: readonly string[]): Promise<unknown> {
    let result: CallToolResult;
    try {
      result = await this.#callOnce(name, args);
    } catch (error) {
      if (!isSessionGone(error)) throw this.#transportError(name, error, secrets);
      await this.#drop();
      try {
        result = await this.#callOnce(name, args);
      } catch (again) {
        throw this.#transportError(name, again, secrets);
      }
    }
    if (result.isError) throw refusalError(name, result, secrets);
    return result.structuredContent;
  }

  async #callOnce(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const client = await this.#session();
    return (await client.callTool(
      { name, arguments: args },
      { timeout: this.#options.timeoutMs ?? 30_000 },
    )) as CallToolResult;
  }

  #session(): Promise<Client> {
    if (this.#closed)
      return Promise.reject(new AgentError("ERR_AGENT_CLOSED", "this holder client is closed"));
    if (this.#client !== undefined) return Promise.resolve(this.#client);
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    const headers = { ...this.#options.headers, ...(this.#options.test ? { "x-isto-test": "1" } : {}) };
    const client = new Client(
      { name: this.#options.name ?? "doorbell-agent", version: this.#options.version ?? "0.1.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    const transport = new StreamableHTTPClientTransport(this.url, {
      fetch: scopedSignalFetch(this.#options.fetch),
      requestInit: { headers, redirect: "error" },
    });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      this.#tools = new Set(tools.map((tool) => tool.name));
    } catch (error) {
      await client.close().catch(() => {});
      if (isAgentError(error)) throw error;
      throw new AgentError(
        "ERR_AGENT_UNREACHABLE",
        `could not open an MCP session with the holder at ${this.url.origin}${this.url.pathname}: ${messageOf(error)}`,
        {},
        error,
      );
    }
    this.#client = client;
    return client;
  }

  async #drop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => {});
  }

  #transportError(name: string, error: unknown, secrets: readonly string[]): AgentError {
    if (isAgentError(error)) return error;
    const words = redact(messageOf(error), secrets);
    const lost =
      error instanceof SdkError &&
      (error.code === SdkErrorCode.RequestTimeout || error.code === SdkErrorCode.ConnectionClosed);
    if (lost || error instanceof SdkHttpError || error instanceof TypeError) {
      return new AgentError("ERR_AGENT_UNREACHABLE", `${name} did not reach the holder: ${words}`);
    }
    return new AgentError("ERR_AGENT_PROTOCOL", `${name} failed: ${words}`);
  }
}

function holderUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new AgentError(
      "ERR_AGENT_INVALID_ARGUMENT",
      `the holder's MCP URL must be absolute, got ${JSON.stringify(String(url).slice(0, 100))}`,
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new AgentError(
      "ERR_AGENT_INVALID_ARGUMENT",
      `the holder's MCP URL must be http(s), not ${parsed.protocol}`,
    );
  }
  return parsed;
}

/** The holder forgot the session (idle timeout or restart): Streamable HTTP answers 404 for it. */
function isSessionGone(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status === 404;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${text}${cause}`.slice(0, 400);
}
