/**
 * Which wire dialect the client speaks on a connection. A dialect the app names is spoken on every
 * connection; otherwise each connection's negotiated era decides: SEP-3415 on 2026-07-28 (the
 * extension is defined for that era only, and is what its servers expect), the design sketch on
 * 2025-11-25 (where the sketch's servers and clients were deployed). A reconnection that lands on
 * another era switches with it.
 */
import type { Client } from "@modelcontextprotocol/client";
import { DIALECTS } from "../protocol/detect.js";
import type { DialectName, EventsDialect } from "../protocol/dialect.js";
import { EventsClientError } from "./errors.js";

export type DialectOption = DialectName | EventsDialect;

export class DialectChoice {
  /** The dialect the app named, when it did. */
  readonly fixed: EventsDialect | undefined;

  constructor(option: DialectOption | undefined) {
    const named = typeof option === "string" ? DIALECTS[option] : option;
    if (
      option !== undefined &&
      (typeof named !== "object" || named === null || !Object.hasOwn(DIALECTS, named.name))
    ) {
      throw new EventsClientError(
        "ERR_EVENTS_INVALID_ARGUMENT",
        `unknown dialect: use ${Object.keys(DIALECTS).join(" or ")}, or leave it out to follow the protocol era`,
      );
    }
    this.fixed = named;
  }

  /** The dialect to speak on `client`. */
  for(client: Client): EventsDialect {
    return this.fixed ?? dialectOfEra(client);
  }
}

/** SEP-3415 on a modern (2026-07-28+, `server/discover`) connection, the sketch on any other. */
export function dialectOfEra(client: Client): EventsDialect {
  return client.getProtocolEra() === "modern" ? DIALECTS["sep-3415"] : DIALECTS.sketch;
}
