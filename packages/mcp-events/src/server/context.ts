import type { JsonObject, RequestId } from "../protocol/index.js";

/**
 * A validated access token as both SDK generations hand it to handlers (v1 `extra.authInfo`, v2
 * `ctx.http.authInfo`): the fields Events reads, typed here so neither SDK is needed to name it.
 */
export interface EventsAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/**
 * One `events/*` request as the modes see it, whichever SDK carried it: who asked, on which
 * request, how to answer on that request's own stream, and when the caller left.
 */
export interface CallContext {
  readonly requestId: RequestId;
  readonly sessionId?: string;
  readonly authInfo?: EventsAuthInfo;
  /** A 2026-07-28 request (per-request `_meta` envelope): answered in SEP-3415 unless it says otherwise. */
  readonly modern: boolean;
  /** Fires when the caller cancelled or its connection closed. */
  readonly signal: AbortSignal;
  /** A notification related to this request (on HTTP: its SSE response). */
  notify(method: string, params: JsonObject): Promise<void>;
}

/** The handler context of `@modelcontextprotocol/sdk` 1.x, as far as Events reads it. */
export interface V1Extra {
  requestId: RequestId;
  sessionId?: string;
  authInfo?: EventsAuthInfo;
  signal: AbortSignal;
  sendNotification(notification: { method: string; params?: JsonObject }): Promise<void>;
}

/** The handler context of `@modelcontextprotocol/server` 2.x, as far as Events reads it. */
export interface V2Context {
  sessionId?: string;
  mcpReq: {
    id: RequestId;
    /** Present on 2026-07-28 requests: the lifted `io.modelcontextprotocol/*` keys. */
    envelope?: unknown;
    signal: AbortSignal;
    notify(notification: { method: string; params?: JsonObject }): Promise<void>;
  };
  http?: { authInfo?: EventsAuthInfo };
}

export function fromV1(extra: V1Extra): CallContext {
  return {
    requestId: extra.requestId,
    ...(extra.sessionId === undefined ? {} : { sessionId: extra.sessionId }),
    ...(extra.authInfo === undefined ? {} : { authInfo: extra.authInfo }),
    modern: false,
    signal: extra.signal,
    notify: (method, params) => extra.sendNotification({ method, params }),
  };
}

export function fromV2(ctx: V2Context): CallContext {
  const authInfo = ctx.http?.authInfo;
  return {
    requestId: ctx.mcpReq.id,
    ...(ctx.sessionId === undefined ? {} : { sessionId: ctx.sessionId }),
    ...(authInfo === undefined ? {} : { authInfo }),
    modern: ctx.mcpReq.envelope !== undefined,
    signal: ctx.mcpReq.signal,
    notify: (method, params) => ctx.mcpReq.notify({ method, params }),
  };
}

/** The default principal: the token's subject (`extra.sub`), else its client id. */
export function defaultPrincipal(call: CallContext): string | undefined {
  const auth = call.authInfo;
  const sub = auth?.extra?.sub;
  return typeof sub === "string" && sub !== "" ? sub : auth?.clientId || undefined;
}
