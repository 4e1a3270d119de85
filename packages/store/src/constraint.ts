/** The integrity rules a write can break, named the same for both engines. */
export type ConstraintViolation = "unique" | "foreign_key" | "not_null" | "check";

const SQLITE: Record<string, ConstraintViolation> = {
  SQLITE_CONSTRAINT_UNIQUE: "unique",
  SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
  SQLITE_CONSTRAINT_FOREIGNKEY: "foreign_key",
  SQLITE_CONSTRAINT_NOTNULL: "not_null",
  SQLITE_CONSTRAINT_CHECK: "check",
};

const POSTGRES: Record<string, ConstraintViolation> = {
  "23505": "unique",
  "23503": "foreign_key",
  "23502": "not_null",
  "23514": "check",
};

/**
 * Which constraint a database error broke, on either engine (e.g. `unique` for an idempotency key
 * already taken), or undefined for any other error. Looks through `cause` chains. Use it instead
 * of showing the driver's error: PostgreSQL's `detail` quotes the offending values.
 */
export function constraintViolation(error: unknown): ConstraintViolation | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = "code" in current ? current.code : undefined;
    if (typeof code === "string") {
      const kind = SQLITE[code] ?? POSTGRES[code];
      if (kind !== undefined) return kind;
    }
    current = "cause" in current ? current.cause : undefined;
  }
  return undefined;
}
