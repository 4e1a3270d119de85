/**
 * The forwarder's MCP client towards its upstream holder: the official v2 SDK `Client` over
 * `StreamableHTTPClientTransport` with version negotiation — 2026-07-28 first (stateless: nothing
 * to lose when a holder process goes away), a 2025 session as the fallback, reopened once when the
 * holder forgot it (idle close, restart, another process behind a balancer).
 * A call made inside `withHeaders` carries those headers (the agent's `x-isto-test: 1`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { scopedSignalFetch } from "@doorbell/mcp-endpoint";
import {
  type CallToolResult,
  Client,
  ProtocolError,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { ForwarderError } from "./errors.js";

export interface Upstream {
  /** The holder's MCP endpoint. */
  readonly url: URL;
  /** The holder's host, as a relay record names it. */
  readonly host: string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** Runs `fn` with extra headers on every upstream request it makes. */
  withHeaders<T>(headers: Record<string, string>, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function createUpstream(
  url: string | URL,
  options: { name?: string; version?: string } = {},
): Upstream {
  const target = new URL(url);
  const extra = new AsyncLocalStorage<Record<string, string>>();
  const fetchWithHeaders = scopedSignalFetch((input, init) => {
    const added = extra.getStore();
    if (added === undefined) return fetch(input, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(added)) headers.set(name, value);
    return fetch(input, { ...init, headers });
  });
  let connecting: Promise<Client> | undefined;

  const connect = (): Promise<Client> => {
    connecting ??= (async () => {
      const client = new Client(
        { name: options.name ?? "doorbell-forwarder", version: options.version ?? "0.1.0" },
        { versionNegotiation: { mode: "auto" } },
      );
      try {
        await client.connect(new StreamableHTTPClientTransport(target, { fetch: fetchWithHeaders }));
      } catch (error) {
        connecting = undefined;
        throw new ForwarderError(
          "ERR_FORWARDER_UPSTREAM",
          `the holder did not accept a session (${describe(error)})`,
        );
      }
      return client;
    })();
    return connecting;
  };

  const reset = async (client: Client) => {
    if (connecting !== undefined && (await connecting.catch(() => undefined)) === client)
      connecting = undefined;
    await client.close().catch(() => {});
  };

  return {
    url: target,
    host: target.hostname,
    async call(name, args) {
      for (let attempt = 0; ; attempt++) {
        const client = await connect();
        try {
          return (await client.callTool({ name, arguments: args })) as CallToolResult;
        } catch (error) {
          // The holder answered with a JSON-RPC error: the session is fine, the call was refused.
          if (error instanceof ProtocolError) throw error;
          // 404: the holder closed our 2025 session before reading the call, so calling again is safe.
          const sessionGone = error instanceof SdkHttpError && error.status === 404;
          await reset(client);
          if (sessionGone && attempt === 0) continue;
          throw new ForwarderError(
            "ERR_FORWARDER_UPSTREAM",
            `the holder could not be reached (${describe(error)})`,
          );
        }
      }
    },
    withHeaders: (headers, fn) => extra.run(headers, fn),
    async close() {
      const client = await connecting?.catch(() => undefined);
      connecting = undefined;
      await client?.close().catch(() => {});
    },
  };
}

/** The error's kind and first words: never arguments (they may hold a code). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  return `${error.name}: ${error.message.replace(/\b(ic|fc)_[0-9A-Za-z]+/g, "[code]").slice(0, 160)}`;
}
