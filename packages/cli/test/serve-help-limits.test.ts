// `doorbell serve --help` says what trips local testing: every shared limit with its default
// (points per seconds) and the exact `--limit` that changes it, so an operator whose consent forms
// or sessions get 429 knows what to pass. The defaults are written out here, not read from the
// holder, so a changed default has to change its help line too.
import { parseLimitSpecs } from "@doorbell/holder";
import { describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const DEFAULTS = [
  ["mail.recipient", "3/3600", /per recipient/],
  ["mail.client", "10/3600", /per client address/],
  ["mail.interaction", "3/3600", /consent link/],
  ["oauth.register", "10/3600", /client registrations/],
  ["mcp.session", "30/150", /MCP sessions/],
  ["mcp.tool", "300/60", /tool calls/],
] as const;

describe("doorbell serve --help", () => {
  it("lists every shared limit with its default and the --limit that changes it", async () => {
    const t = captureIo();
    expect(await run(["serve", "--help"], t.io)).toBe(0);
    const lines = t.out().split("\n");
    for (const [name, rule, counts] of DEFAULTS) {
      const line = lines.find((text) => text.includes(`--limit ${name}=`));
      expect(line, name).toBeDefined();
      expect(line).toContain(`--limit ${name}=${rule}`);
      expect(line).toMatch(counts);
    }
    expect(t.out()).toContain("DOORBELL_LIMITS");
  });

  it("takes each line's spelling as it is printed", async () => {
    const t = captureIo();
    await run(["serve", "--help"], t.io);
    const printed = [...t.out().matchAll(/--limit ([a-z.]+=\d+\/\d+)/g)].map((match) => match[1]);
    expect(printed).toHaveLength(DEFAULTS.length);
    expect(Object.keys(parseLimitSpecs(printed as string[])).sort()).toEqual(
      DEFAULTS.map(([name]) => name).sort(),
    );
  });
});
