import { describe, expect, it } from "vitest";
import { sep3415, sketch } from "../src/index.js";
import { eventNotifications, notificationJson } from "../src/server/frames.js";

// Streams whose response the extension writes itself serialise each event once and join it to
// each stream's own fields: the message must be the one the dialect's codec writes.
const events = [
  {
    eventId: "evt_001",
    name: "email.received",
    timestamp: "2026-02-19T15:30:00Z",
    data: { messageId: "msg_xyz", nested: { quote: 'say "hi"\n', n: 1.5 } },
    cursor: "historyId_99842",
  },
  { eventId: "evt_002", name: "email.received", timestamp: "2026-02-19T15:31:00Z", data: {} },
];

describe("pre-serialised event notifications", () => {
  for (const wire of [sketch, sep3415])
    for (const requestId of [7, "req-7"])
      for (const routeId of [undefined, "client-sub-1"])
        it(`equal the ${wire.name} codec's message (request id ${JSON.stringify(requestId)}, route ${routeId ?? "none"})`, () => {
          const write = eventNotifications(wire, requestId, routeId);
          for (const event of events) {
            const expected = {
              jsonrpc: "2.0",
              method: "notifications/events/event",
              params: wire.stream.event.encode({
                requestId,
                ...(routeId === undefined ? {} : { routeId }),
                event,
              }),
            };
            expect(JSON.parse(write(event))).toEqual(expected);
            // The same event again (another stream): the same text.
            expect(write(event)).toBe(write(event));
          }
        });

  it("any other notification is the JSON-RPC message of its params", () => {
    const params = sep3415.stream.heartbeat.encode({ requestId: 3, cursor: null });
    expect(JSON.parse(notificationJson("notifications/events/heartbeat", params))).toEqual({
      jsonrpc: "2.0",
      method: "notifications/events/heartbeat",
      params,
    });
  });
});
