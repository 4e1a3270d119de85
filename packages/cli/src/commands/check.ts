import { parseArgs } from "node:util";
import {
  type CheckResult,
  checkRecord,
  createKeyPageFetcher,
  DEFAULT_TRUSTED_ORIGIN,
  type KeyPageSource,
  staticKeyPages,
} from "@doorbell/agreements";
import { type Io, UsageError } from "../io.js";

/** Where the trusted origins come from besides --trusted-origin: comma- or space-separated. */
export const TRUSTED_ORIGINS_ENV = "DOORBELL_TRUSTED_ORIGINS";

export const CHECK_USAGE = `doorbell check RECORD.json|- [--json] [--trusted-origin URL]… [--key-page PAGE.json]…
  Checks an agent-agreement/1 record (the six workflow steps) and says one of its results.

  Trust is configuration: no key page host is trusted until you name it.
    --trusted-origin URL   fetch key pages from this origin (repeatable), without following
                           redirects; e.g. --trusted-origin ${DEFAULT_TRUSTED_ORIGIN}
    ${TRUSTED_ORIGINS_ENV}   the same, comma-separated, from the environment
    --key-page PAGE.json   check offline against these pages only (repeatable), no DNS; with
                           no trusted origin, each given page is trusted at whatever host its
                           record names; with one, only pages on it count
  With neither, nothing can be trusted: a usage error.

  Exit code: 0 checks out with two signatures, 3 with one signature, 4 their reply recorded,
  1 does not check out, 5 could not check (a key page could not be reached; try again later),
  2 usage error (including a record file that cannot be read).`;

/** One exit code per result, so a script can tell them apart without parsing the output. */
export const CHECK_EXIT_CODES = {
  two_signatures: 0,
  one_signature: 3,
  their_reply: 4,
  does_not_check_out: 1,
  could_not_check: 5,
} as const;

const options = {
  json: { type: "boolean", default: false },
  "trusted-origin": { type: "string", multiple: true },
  "key-page": { type: "string", multiple: true },
} as const;

const parse = (args: readonly string[]) => {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
};

const text = (result: CheckResult): string => {
  if (!result.ok) return `${result.summary}\n  (step ${result.step}, ${result.code})\n`;
  const lines = [result.summary];
  for (const s of result.signatures)
    lines.push(
      `  ${s.of}: signed by ${s.party} with key ${s.kid} (sender ${s.vouchedBy === "dns" ? "vouched by DNS" : `listed by ${s.vouchedBy}`})`,
    );
  if (result.keys === "as_supplied")
    lines.push(
      "  keys as supplied: the key pages were given to the check, not fetched from a trusted origin; the record matches them, and only their giver vouches for them",
    );
  for (const w of result.warnings) lines.push(`  warning: ${w}`);
  return `${lines.join("\n")}\n`;
};

const json = (result: CheckResult): string => {
  const { ok, result: outcome, summary } = result;
  const body = result.ok
    ? {
        ok,
        result: outcome,
        summary,
        record: result.record.id,
        signatures: result.signatures,
        keys: result.keys,
        warnings: result.warnings,
        ...(result.vouchedBy ? { vouchedBy: result.vouchedBy } : {}),
      }
    : {
        ok,
        result: outcome,
        summary,
        reason: result.reason,
        code: result.code,
        step: result.step,
        details: result.details,
      };
  return `${JSON.stringify(body, null, 2)}\n`;
};

const readInput = async (io: Io, path: string, what: string): Promise<Uint8Array> => {
  try {
    return path === "-" ? await io.stdin() : await io.readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "unreadable");
    throw new UsageError(`cannot read the ${what} ${path}: ${why}`);
  }
};

const originsFrom = (flags: readonly string[] | undefined, env: string | undefined): string[] => {
  const fromEnv = (env ?? "").split(/[\s,]+/).filter((origin) => origin !== "");
  const origins = [...(flags ?? []), ...fromEnv];
  for (const origin of origins) {
    if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol)) {
      throw new UsageError(`--trusted-origin must be an http(s) origin, not ${JSON.stringify(origin)}`);
    }
  }
  return origins;
};

export async function checkCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args);
  if (positionals.length !== 1) throw new UsageError("give exactly one record file (or - for stdin)");
  const trustedOrigins = originsFrom(values["trusted-origin"], io.env[TRUSTED_ORIGINS_ENV]);
  const keyPages = values["key-page"] ?? [];
  if (trustedOrigins.length === 0 && keyPages.length === 0) {
    throw new UsageError(
      `no key page host is trusted: give --trusted-origin URL (e.g. ${DEFAULT_TRUSTED_ORIGIN}), ${TRUSTED_ORIGINS_ENV}, or --key-page FILE`,
    );
  }
  const path = positionals[0] as string;
  const record = await readInput(io, path, "record");
  let source: KeyPageSource;
  if (keyPages.length > 0) {
    const pages: unknown[] = [];
    for (const file of keyPages) {
      const bytes = await readInput(io, file, "key page");
      try {
        pages.push(JSON.parse(new TextDecoder().decode(bytes)) as unknown);
      } catch {
        throw new UsageError(`the key page ${file} is not JSON`);
      }
    }
    try {
      source = await staticKeyPages(pages);
    } catch (error) {
      throw new UsageError(`a key page is not valid: ${(error as Error).message}`);
    }
  } else {
    source = createKeyPageFetcher();
  }
  let result: CheckResult;
  try {
    result = await checkRecord(record, {
      ...(trustedOrigins.length > 0 ? { trustedOrigins } : { trustGivenPages: true }),
      source,
      ...(keyPages.length > 0 ? { txt: async () => [] } : {}),
    });
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
  io.stdout(values.json ? json(result) : text(result));
  return CHECK_EXIT_CODES[result.result];
}
