/**
 * One line for an error a command could not recover from: its message, then the causes it wraps
 * (a store error names the OS or SQLite error underneath), then its code. The stack trace only
 * with DOORBELL_DEBUG set: a user reads the reason, a developer asks for the trace.
 */
export function errorLine(error: unknown, env: Readonly<Record<string, string | undefined>>): string {
  const parts: string[] = [];
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    // Node's own messages often start with the code ("EACCES: permission denied, open '…'").
    if (message !== "" && !parts.some((part) => part.includes(message))) parts.push(message);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && !codes.includes(code) && !message.startsWith(`${code}:`))
      codes.push(code);
    current = current instanceof Error ? current.cause : undefined;
  }
  const line = `${parts.join(": ") || "failed"}${codes.length > 0 ? ` (${codes.join(", ")})` : ""}`;
  const debug = env.DOORBELL_DEBUG;
  if (debug !== undefined && debug !== "" && debug !== "0" && error instanceof Error && error.stack) {
    return `${line}\n${error.stack}`;
  }
  return line;
}
