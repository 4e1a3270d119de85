import { timingSafeEqual } from "node:crypto";
import { TaskState, taskStateFromJSON } from "@a2a-js/sdk";
import type { PushBindingConfig } from "./push-binding.js";
import type { TaskReconciler } from "./task-reconciler.js";

/**
 * The client's webhook endpoint for A2A push notifications, as a web-standard handler. A push
 * counts only when it names a task this client bound, and carries exactly the authentication the
 * binding declared (`Authorization: <scheme> <credentials>`, or the token header when the binding
 * used a token). A push that fails authentication is answered 401 and sets the task's
 * `push_unverified` flag, so the task is polled from then on. An accepted push is a hint: the
 * reconciler still confirms it with `tasks/get`.
 */

export interface PushReceiverOptions {
  readonly reconciler: TaskReconciler;
  /** Default 256 KiB. */
  readonly maxBodyBytes?: number;
}

export interface PushReceiver {
  /** Registers the binding a config was sent for. The config must carry `authentication` or `token`. */
  bind(config: PushBindingConfig): void;
  unbind(taskId: string): void;
  handle(request: Request): Promise<Response>;
}

const V03_STATES: Record<string, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  canceled: TaskState.TASK_STATE_CANCELED,
  failed: TaskState.TASK_STATE_FAILED,
  rejected: TaskState.TASK_STATE_REJECTED,
  "auth-required": TaskState.TASK_STATE_AUTH_REQUIRED,
};

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseState(value: unknown): TaskState | undefined {
  if (typeof value !== "string") return undefined;
  const legacy = V03_STATES[value];
  if (legacy !== undefined) return legacy;
  const state = taskStateFromJSON(value);
  return state === TaskState.UNRECOGNIZED || state === TaskState.TASK_STATE_UNSPECIFIED ? undefined : state;
}

/** The task id and state a push announces: a v1 StreamResponse, or a bare v0.3 Task/event. */
export function readPushPayload(body: unknown): { taskId: string; state: TaskState | undefined } | undefined {
  if (!isObject(body)) return undefined;
  const task = isObject(body.task) ? body.task : body.kind === "task" ? body : undefined;
  if (task !== undefined && typeof task.id === "string") {
    return { taskId: task.id, state: isObject(task.status) ? parseState(task.status.state) : undefined };
  }
  const update = isObject(body.statusUpdate)
    ? body.statusUpdate
    : isObject(body.artifactUpdate)
      ? body.artifactUpdate
      : typeof body.taskId === "string"
        ? body
        : undefined;
  if (update !== undefined && typeof update.taskId === "string") {
    return {
      taskId: update.taskId,
      state: isObject(update.status) ? parseState(update.status.state) : undefined,
    };
  }
  const message = isObject(body.message) ? body.message : undefined;
  if (message !== undefined && typeof message.taskId === "string" && message.taskId !== "") {
    return { taskId: message.taskId, state: undefined };
  }
  return undefined;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Why the request does not carry the binding's authentication, or undefined when it does. */
export function checkPushAuthentication(headers: Headers, config: PushBindingConfig): string | undefined {
  const auth = config.authentication;
  if (auth !== undefined) {
    const header = headers.get("authorization");
    if (header === null) return `no Authorization header (the binding declared ${auth.scheme})`;
    const space = header.indexOf(" ");
    const scheme = space < 0 ? header : header.slice(0, space);
    const credentials = space < 0 ? "" : header.slice(space + 1).trim();
    if (scheme.toLowerCase() !== auth.scheme.toLowerCase()) {
      return `Authorization scheme ${scheme} instead of ${auth.scheme}`;
    }
    return sameSecret(credentials, auth.credentials ?? "") ? undefined : "wrong Authorization credentials";
  }
  if (config.token !== undefined && config.token !== "") {
    const token = headers.get("x-a2a-notification-token") ?? headers.get("a2a-notification-token");
    if (token === null) return "no notification token header";
    return sameSecret(token, config.token) ? undefined : "wrong notification token";
  }
  return "the binding declares no authentication";
}

export function createPushReceiver(options: PushReceiverOptions): PushReceiver {
  const bindings = new Map<string, PushBindingConfig>();
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  return {
    bind(config) {
      if (config.authentication === undefined && (config.token ?? "") === "") {
        throw new TypeError("a push binding must declare authentication or a token");
      }
      bindings.set(config.taskId, config);
    },
    unbind(taskId) {
      bindings.delete(taskId);
    },
    async handle(request) {
      if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
      const declared = Number(request.headers.get("content-length") ?? "0");
      if (declared > maxBodyBytes) return new Response(null, { status: 413 });
      const bytes = new Uint8Array(await request.arrayBuffer());
      if (bytes.byteLength > maxBodyBytes) return new Response(null, { status: 413 });
      let payload: ReturnType<typeof readPushPayload>;
      try {
        payload = readPushPayload(JSON.parse(new TextDecoder().decode(bytes)));
      } catch {
        payload = undefined;
      }
      if (payload === undefined) return new Response(null, { status: 400 });
      const binding = bindings.get(payload.taskId);
      if (binding === undefined) return new Response(null, { status: 403 });
      const failure = checkPushAuthentication(request.headers, binding);
      if (failure !== undefined) {
        options.reconciler.notePushAuthFailure(payload.taskId, failure);
        return new Response(null, { status: 401 });
      }
      if (payload.state !== undefined) options.reconciler.notePush(payload.taskId, payload.state);
      return new Response(null, { status: 204 });
    },
  };
}
