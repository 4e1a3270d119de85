/**
 * The SDK Client the subscriptions talk through. Given a `connect` function, a Client whose
 * connection failed (server restart, session gone, stdio child exited) is replaced by a new one,
 * once for all the subscriptions that saw it fail; given a Client alone, it is used as it is.
 */
import type { Client } from "@modelcontextprotocol/client";
import { EventsClientError } from "./errors.js";

export type Connect = () => Promise<Client>;

export class Connection {
  #current: Client | undefined;
  #connecting: Promise<Client> | undefined;
  readonly #connect: Connect | undefined;
  readonly #onClient: (client: Client) => void;
  #closed = false;

  constructor(source: { client?: Client; connect?: Connect }, onClient: (client: Client) => void) {
    if (!source.client && !source.connect) {
      throw new EventsClientError(
        "ERR_EVENTS_INVALID_ARGUMENT",
        "give either a connected client or connect()",
      );
    }
    this.#current = source.client;
    this.#connect = source.connect;
    this.#onClient = onClient;
    if (source.client) onClient(source.client);
  }

  get canReconnect(): boolean {
    return this.#connect !== undefined;
  }

  async get(): Promise<Client> {
    if (this.#closed) throw new EventsClientError("ERR_EVENTS_CLOSED", "the events client is closed");
    if (this.#current) return this.#current;
    if (!this.#connect)
      throw new EventsClientError("ERR_EVENTS_UNREACHABLE", "the client's connection is closed");
    this.#connecting ??= this.#connect().then(
      (client) => {
        this.#connecting = undefined;
        if (this.#closed) {
          void client.close().catch(() => {});
          throw new EventsClientError("ERR_EVENTS_CLOSED", "the events client is closed");
        }
        this.#current = client;
        this.#onClient(client);
        return client;
      },
      (error: unknown) => {
        this.#connecting = undefined;
        throw new EventsClientError(
          "ERR_EVENTS_UNREACHABLE",
          `cannot connect to the server: ${error instanceof Error ? error.message.slice(0, 200) : "unknown failure"}`,
          {},
          error,
        );
      },
    );
    return this.#connecting;
  }

  /** `client` failed at the transport level; the next get() connects anew (when it can). */
  failed(client: Client): void {
    if (this.#current !== client || !this.#connect) return;
    this.#current = undefined;
    void client.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    // A client given by the app stays the app's to close.
    if (this.#connect && this.#current) await this.#current.close().catch(() => {});
    this.#current = undefined;
  }
}
