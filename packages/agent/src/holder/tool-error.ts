/**
 * The one place a holder's refusal becomes an AgentError. A Doorbell holder puts its stable code in
 * `_meta["io.doorbell/error"]`; any other holder gives words only, which are kept as they are.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { AgentError, type AgentErrorCode } from "../errors.js";

const ERROR_META_KEY = "io.doorbell/error";
const MAX_MESSAGE = 500;

const BY_HOLDER_CODE: Record<string, AgentErrorCode> = {
  ERR_HOLDER_INVALID: "ERR_AGENT_INVALID_INPUT",
  ERR_HOLDER_NOT_FOUND: "ERR_AGENT_NOT_FOUND",
  ERR_HOLDER_FORBIDDEN: "ERR_AGENT_FORBIDDEN",
  ERR_HOLDER_GONE: "ERR_AGENT_GONE",
  ERR_HOLDER_RATE_LIMITED: "ERR_AGENT_RATE_LIMITED",
};

export function refusalError(tool: string, result: CallToolResult, secrets: readonly string[]): AgentError {
  const meta = result._meta?.[ERROR_META_KEY] as { code?: unknown; retryAfterSeconds?: unknown } | undefined;
  const holderCode = typeof meta?.code === "string" ? meta.code : undefined;
  const retryAfterSeconds =
    typeof meta?.retryAfterSeconds === "number" && Number.isFinite(meta.retryAfterSeconds)
      ? meta.retryAfterSeconds
      : undefined;
  const words = redact(textOf(result), secrets) || "no reason given";
  let code: AgentErrorCode = (holderCode && BY_HOLDER_CODE[holderCode]) || "ERR_AGENT_HOLDER_REFUSED";
  // The SDK's own schema check answers in words only.
  if (holderCode === undefined && /^(MCP error -32602: )?Input validation error/.test(words))
    code = "ERR_AGENT_INVALID_INPUT";
  return new AgentError(code, `the holder refused ${tool}: ${words}`, {
    ...(holderCode === undefined ? {} : { holderCode }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

function textOf(result: CallToolResult): string {
  const text = (result.content ?? [])
    .map((block) => (block.type === "text" ? block.text : ""))
    .filter((part) => part !== "")
    .join(" ");
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

/** A holder should never echo a code or a secret, but its words end up in logs: make sure. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join("[redacted]");
  return out;
}
