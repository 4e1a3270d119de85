import { EventsError } from "@doorbell/mcp-events";

/**
 * A position in one intent's match log: the (deliveredAt, match id) watermark of the last match
 * seen, in the order intent_list_matches shows them (`<deliveredAt ms>-<id>`). "0-0" is the start.
 */
export interface MatchPosition {
  at: number;
  id: number;
}

export const START: MatchPosition = { at: 0, id: 0 };

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
