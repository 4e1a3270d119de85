/**
 * CI's closing lines for one run of the suite, read from Vitest's JSON report: the ten slowest
 * files, so a slow test is seen the day it lands, each failed test by file and name with the first
 * line of its message, so a failure is read from the closing lines alone, each test that did not
 * run (a failed hook or a worker that died skips the rest of its suite without failing a test),
 * then the counts as a plain line (`node20: 2477 passed, 0 failed, 0 skipped`). Given the run's
 * console output too, it repeats Vitest's blocks for failed suites and errors outside any test,
 * whose text the JSON report does not carry.
 *
 *   node --import tsx scripts/test-summary.ts REPORT.json LABEL [OUTPUT.log]
 */
import fs from "node:fs";
import { stripVTControlCharacters } from "node:util";

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  startTime: number;
  testResults: {
    name: string;
    startTime: number;
    endTime: number;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

const [file, label = "tests", output] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: test-summary.ts REPORT.json LABEL [OUTPUT.log]");
/** The path from the checkout's root: the Node 24 leg runs in a copy elsewhere. */
const inRepository = (name: string) => /(?:^|\/)((?:packages|examples|scripts)\/.*)$/.exec(name)?.[1] ?? name;

const report = JSON.parse(fs.readFileSync(file, "utf8")) as Report;

const files = report.testResults
  .map((result) => ({ name: inRepository(result.name), ms: result.endTime - result.startTime }))
  .sort((a, b) => b.ms - a.ms);
const wall = Math.max(...report.testResults.map((result) => result.endTime)) - report.startTime;
console.log(
  `\n${label}: the ten slowest of ${files.length} files (the run took ${(wall / 1000).toFixed(0)} s)`,
);
for (const { name, ms } of files.slice(0, 10))
  console.log(`${(ms / 1000).toFixed(1).padStart(8)} s  ${name}`);
/** The first line of a failure, short enough for a closing line. */
const firstLine = (text: string | undefined) => (text ?? "").trim().split("\n")[0]?.slice(0, 300) ?? "";
for (const result of report.testResults) {
  const failed = result.assertionResults.filter((test) => test.status === "failed");
  // A file that failed as a whole (an import error, a hook) has a message and no failed test.
  if (failed.length === 0 && result.message)
    console.log(`${label}: FAILED ${inRepository(result.name)}: ${firstLine(result.message)}`);
  for (const test of failed)
    console.log(
      `${label}: FAILED ${inRepository(result.name)} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`,
    );
  for (const test of result.assertionResults.filter((test) => !["passed", "failed"].includes(test.status)))
    console.log(`${label}: NOT RUN (${test.status}) ${inRepository(result.name)} > ${test.fullName}`);
}
if (output !== undefined)
  for (const block of vitestErrorBlocks(fs.readFileSync(output, "utf8"))) console.log(block);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);

/**
 * Vitest's own blocks for what the JSON report leaves out: a suite whose hook failed and errors
 * outside any test (`⎯⎯⎯ Failed Suites 1 ⎯⎯⎯`, `⎯⎯⎯ Unhandled Errors ⎯⎯⎯`), each cut to its first lines.
 */
function vitestErrorBlocks(text: string): string[] {
  const lines = stripVTControlCharacters(text).split("\n");
  // A Set: Vitest prints its unhandled errors twice, as they happen and again at the end.
  const blocks = new Set<string>();
  lines.forEach((line, index) => {
    if (!/^⎯+ (Failed Suites|Unhandled (Errors?|Rejections?)).* ⎯+$/.test(line.trim())) return;
    blocks.add(`${label}: ${lines.slice(index, index + 25).join(`\n${label}: `)}`);
  });
  return [...blocks];
}
