// Issue 15, item 4: a server that uses only poll and push never loads the durable store, so
// better-sqlite3 and pg need not be installed. Webhook delivery (@doorbell/delivery on
// @doorbell/store) is an optional peer, loaded by a dynamic import only when configured.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import pkg from "../package.json" with { type: "json" };

const SRC = path.resolve(import.meta.dirname, "../src");
const HEAVY = ["@doorbell/store", "@doorbell/delivery", "better-sqlite3", "pg"];

/** The modules a file loads when it is loaded: static imports and re-exports, not `import type`. */
function staticImports(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const found: string[] = [];
  const statement = /^(?:import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms;
  for (const match of text.matchAll(statement)) {
    if (match[1]) continue;
    // `import { type A, type B } from` loads nothing either.
    const names = /\{([^}]*)\}/.exec(match[0])?.[1];
    if (names?.split(",").every((name) => name.trim() === "" || name.trim().startsWith("type "))) continue;
    found.push(match[2] as string);
  }
  return found;
}

function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith(".")) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
      else packages.add(spec);
    }
  };
  visit(entry);
  return packages;
}

describe("the dependency diet", () => {
  it("the package entry loads neither the store, the delivery engine, better-sqlite3 nor pg", () => {
    const loaded = [...reachable(path.join(SRC, "index.ts"))];
    for (const heavy of HEAVY) expect(loaded.filter((spec) => spec.startsWith(heavy))).toEqual([]);
    expect(loaded).toContain("@modelcontextprotocol/server");
  });

  it("nothing in src imports @modelcontextprotocol/sdk 1.x, not even its types, so it is no dependency", () => {
    // Issue 15: the client is on the v2 Client; the legacy attach path reads 1.x shapes by structure.
    const files = fs.readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const importing = files.filter((file) =>
      /(?:from|import)\s*\(?\s*"@modelcontextprotocol\/sdk[/"]/.test(
        fs.readFileSync(path.join(SRC, file), "utf8"),
      ),
    );
    expect(importing).toEqual([]);
    expect(Object.keys(pkg.dependencies)).not.toContain("@modelcontextprotocol/sdk");
    expect(Object.keys(pkg.dependencies)).toContain("@modelcontextprotocol/client");
  });

  it("webhook delivery still loads them, and they are optional peers", () => {
    const loaded = [...reachable(path.join(SRC, "server/webhook.ts"))];
    expect(loaded).toContain("@doorbell/store");
    expect(loaded).toContain("@doorbell/delivery");
    expect(Object.keys(pkg.dependencies)).not.toContain("@doorbell/store");
    expect(pkg.peerDependenciesMeta["@doorbell/store"]).toEqual({ optional: true });
    expect(pkg.peerDependenciesMeta["@doorbell/delivery"]).toEqual({ optional: true });
  });
});
