/**
 * The forwarder's HTTP surface as one Hono app (web-standard `fetch`):
 *
 *   POST|GET|DELETE /mcp     the forwarder's MCP endpoint (mcp-endpoint.ts)
 *   POST /relay/:path        where the holder rings (relay-endpoint.ts)
 *   GET /healthz             200 when the database answers, 503 when it does not
 *   GET /                    what this is, in plain text
 */

import { MCP_PATH } from "@doorbell/mcp-endpoint";
import { sql } from "@doorbell/store";
import { Hono } from "hono";
import type { ForwarderContext } from "./context.js";
import type { ForwarderMcp } from "./mcp-endpoint.js";
import type { RelayEndpoint } from "./relay-endpoint.js";

interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: string } };
}

export function createForwarderApp(ctx: ForwarderContext, mcp: ForwarderMcp, relay: RelayEndpoint) {
  const app = new Hono<{ Bindings: NodeBindings }>();
  app.all(MCP_PATH, (c) => {
    const clientAddress = c.env?.incoming?.socket?.remoteAddress;
    return mcp(c.req.raw, clientAddress === undefined ? {} : { clientAddress });
  });
  app.post("/relay/:path", (c) => relay(c.req.raw, c.req.param("path")));
  app.all("/relay/:path", (c) => {
    c.header("allow", "POST");
    return c.json({ error: "ERR_WEBHOOK_METHOD", message: "doorbells are delivered with POST" }, 405);
  });
  app.get("/healthz", async (c) => {
    let ok = true;
    try {
      await sql`select 1`.execute(ctx.store.db);
    } catch {
      ok = false;
    }
    c.header("cache-control", "no-store");
    return c.json({ status: ok ? "ok" : "unavailable" }, ok ? 200 : 503);
  });
  app.get("/", (c) =>
    c.text(
      [
        "Doorbell forwarder (Isto Intents MCP binding 0.1, push profile 0.4 §7)",
        "",
        `MCP endpoint (Streamable HTTP): ${ctx.publicUrl}${MCP_PATH}`,
        `Forwards to the intent holder at ${ctx.upstream.url.origin}`,
        "",
      ].join("\n"),
    ),
  );
  app.notFound((c) => c.text("Not found\n", 404));
  app.onError((error, c) => {
    ctx.log.error({ event: "forwarder.http_failed", error: error.name }, error.message.slice(0, 300));
    return c.text("Something went wrong on our side. Try again later.\n", 500);
  });
  return app;
}
