/**
 * The order `npm test` starts its files in. Vitest's own sequencer runs the slowest files first,
 * but only once a run has cached their durations; a fresh clone has none, and a minute-long file
 * started near the end stretches the whole run by its length. The files below take a minute or
 * more each (the process-heavy ones), so they start first on every machine; after them, Vitest's
 * order (failed first, then the longest, from its cache).
 *
 * When CI's list of the ten slowest files shows a new one of a minute or more, add it here.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

export const SLOW_FIRST = [
  "packages/holder/test/mcp/mcp-fuzz-tool-inputs.test.ts",
  "packages/cli/test/pack-and-install.test.ts",
  "packages/cli/test/scale-out-three-processes.test.ts",
  "packages/cli/test/events-across-processes.test.ts",
  "packages/delivery/test/crash-sigkill.test.ts",
  "packages/holder/test/mcp/mcp-session-5000-calls-no-listener-leak.test.ts",
];

const rank = (spec: TestSpecification): number => {
  const index = SLOW_FIRST.findIndex((file) => spec.moduleId.endsWith(file));
  return index === -1 ? SLOW_FIRST.length : index;
};

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: within a rank, Vitest's order stands.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
