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

export const CHECK_USAGE = `doorbell check RECORD.json|- [--json] [--trusted-origin URL]… [--key-page PAGE.json]…
  Checks an agent-agreement/1 record (the six workflow steps) and says one of four results.
  Key pages are fetched from the trusted origin (default ${DEFAULT_TRUSTED_ORIGIN}) without
  following redirects; with --key-page the check is offline: only those pages, no DNS.
  Exit code: 0 checks out with two signatures, 3 with one signature, 4 their reply recorded,
  1 does not check out, 2 usage error.`;

/** One exit code per result, so a script can tell them apart without parsing the output. */
export const CHECK_EXIT_CODES = {
  two_signatures: 0,
  one_signature: 3,
  their_reply: 4,
  does_not_check_out: 1,
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

export async function checkCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args);
  if (positionals.length !== 1) throw new UsageError("give exactly one record file (or - for stdin)");
  const trustedOrigins = values["trusted-origin"] ?? [DEFAULT_TRUSTED_ORIGIN];
  for (const origin of trustedOrigins) {
    if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol)) {
      throw new UsageError(`--trusted-origin must be an http(s) origin, not ${JSON.stringify(origin)}`);
    }
  }
  const path = positionals[0] as string;
  const record = path === "-" ? await io.stdin() : await io.readFile(path);
  let source: KeyPageSource;
  let offline = false;
  if (values["key-page"]) {
    offline = true;
    const pages = await Promise.all(
      values["key-page"].map(
        async (file) => JSON.parse(new TextDecoder().decode(await io.readFile(file))) as unknown,
      ),
    );
    source = await staticKeyPages(pages);
  } else {
    source = createKeyPageFetcher();
  }
  let result: CheckResult;
  try {
    result = await checkRecord(record, {
      trustedOrigins,
      source,
      ...(offline ? { txt: async () => [] } : {}),
    });
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
  io.stdout(values.json ? json(result) : text(result));
  return CHECK_EXIT_CODES[result.result];
}
