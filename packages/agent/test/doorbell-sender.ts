/**
 * What a holder does when it rings: a Standard Webhooks POST signed with the subscription's secret
 * (createStandardSigner from @doorbell/webhooks), sent over real HTTP to a listener on loopback.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createStandardSigner } from "@doorbell/webhooks";
import type { DoorbellListener } from "../src/index.js";

export interface Ring {
  secrets: string[];
  body: unknown;
  id?: string;
  /** Whole seconds; default the real clock's. */
  timestamp?: number;
}

export interface Answer {
  status: number;
  json: Record<string, unknown>;
}

export const newWebhookId = () => `msg_${randomBytes(12).toString("base64url")}`;

export async function ring(url: string, message: Ring): Promise<Answer> {
  const body = typeof message.body === "string" ? message.body : JSON.stringify(message.body);
  const headers = createStandardSigner({ secrets: message.secrets }).headers({
    id: message.id ?? newWebhookId(),
    timestamp: message.timestamp ?? Math.floor(Date.now() / 1000),
    body,
  });
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, json: text === "" ? {} : JSON.parse(text) };
}

export const doorbell = (type: string, data: Record<string, unknown>, timestamp = new Date()) => ({
  specVersion: "0.4",
  type,
  timestamp: timestamp.toISOString().replace(/\.\d{3}Z$/, "Z"),
  data,
});

/** Serves a listener on node:http at 127.0.0.1:<free port>. */
export async function serveListener(
  listener: DoorbellListener,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer(listener.node);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
