// examples/tour.ts, the README's tour as one script, runs to the end: publish, consent and
// confirm through the pages, matches read with the code, withdrawal.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");

it("examples/tour.ts runs from publishing to withdrawal", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--conditions=@doorbell/source", join(ROOT, "examples/tour.ts")],
    { cwd: ROOT, timeout: 170_000 },
  );
  expect(stdout).toMatch(/status awaiting_consent/);
  expect(stdout).toMatch(/the intent is now active/);
  expect(stdout).toMatch(/\d+ match(es)?:\n {3}- /);
  expect(stdout).toMatch(/status withdrawn\n$/);
}, 180_000);
