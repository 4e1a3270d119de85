/**
 * `POST /push/end`: where a subscription's receiver ends it without the intentCode (the end
 * request, subscriber-end.ts). The holder descriptor names it (`push.endUrl`), so a forwarder
 * finds it and an older holder, which does not name it, is left alone.
 *
 * Answers JSON: 200 `{subscriptionId, status: "ended", endedReason}` (also when it had ended
 * already); 400 a malformed request; 401 a signature or timestamp that does not verify; 409 a
 * webhook-id received before; 413 a body over 1 KB; 405 any other method.
 */
import { MAX_SUBSCRIPTION_END_BYTES } from "@doorbell/intents";
import type { Env, Hono, MiddlewareHandler, Schema } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { PushService } from "./types.js";

export const PUSH_END_PATH = "/push/end";

const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), {
    status,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      ...headers,
    },
  });

export function mountSubscriberEnd<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  push: Pick<PushService, "endBySubscriber">,
): void {
  const tooLarge = bodyLimit({
    maxSize: MAX_SUBSCRIPTION_END_BYTES,
    onError: () =>
      json(413, {
        error: "ERR_PUSH_END_TOO_LARGE",
        message: `an end request is at most ${MAX_SUBSCRIPTION_END_BYTES} bytes`,
      }),
  }) as MiddlewareHandler<E>;
  app.post(PUSH_END_PATH, tooLarge, async (c) => {
    const body = new Uint8Array(await c.req.arrayBuffer());
    const answer = await push.endBySubscriber(c.req.raw.headers, body);
    if (!answer.ok) return json(answer.status, { error: answer.code, message: answer.message });
    return json(200, {
      subscriptionId: answer.subscriptionId,
      status: "ended",
      endedReason: answer.endedReason,
    });
  });
  app.all(PUSH_END_PATH, () =>
    json(
      405,
      { error: "ERR_PUSH_END_METHOD", message: "an end request is sent with POST" },
      { allow: "POST" },
    ),
  );
}
