import { EventsError } from "@doorbell/mcp-events";

import { type MatchPosition, START } from "../matching/reader.js";

export { type MatchPosition, START };

/*
 * A cursor is a position in one intent's matches: the (deliveredAt, match_seq) of the last match
 * seen, in the order intent_list_matches shows them (`<deliveredAt ms>-<seq>`). "0-0" is the start.
 */

export function encodeMatchCursor(position: MatchPosition): string {
  return `${position.at}-${position.id}`;
}

/** An unknown cursor is expired, not invalid: cursors are opaque and the recovery is the same. */
export function decodeMatchCursor(cursor: string): MatchPosition {
  const parts = /^(\d{1,16})-(\d{1,16})$/.exec(cursor);
  const at = Number(parts?.[1]);
  const id = Number(parts?.[2]);
  if (!parts || !Number.isSafeInteger(at) || !Number.isSafeInteger(id)) {
    throw new EventsError("CursorExpired", { reason: "This is not a cursor of intent.matches.delivered" });
  }
  return { at, id };
}
