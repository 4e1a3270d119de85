/**
 * Whether a database error means "too busy right now", on either engine: the write lock held past
 * SQLite's busy timeout, no pooled PostgreSQL connection free within the pool's wait, or the
 * server refusing connections for a while. Such a call can succeed when retried a moment later,
 * so a caller answers "busy, try again" instead of reporting a fault. Looks through `cause` chains.
 */
export function isDatabaseBusy(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && BUSY_CODES.has(code)) return true;
    // node-postgres's pool says so only in words: no free connection within connectionTimeoutMillis.
    if (typeof message === "string" && POOL_WAIT.test(message)) return true;
    current = "cause" in current ? (current as { cause?: unknown }).cause : undefined;
  }
  return false;
}

const BUSY_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_BUSY_SNAPSHOT",
  "SQLITE_LOCKED",
  // PostgreSQL: too_many_connections, cannot_connect_now, lock_not_available (lock_timeout).
  "53300",
  "57P03",
  "55P03",
]);

const POOL_WAIT =
  /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/;
