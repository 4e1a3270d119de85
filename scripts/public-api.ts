/**
 * Lists the public API of every workspace package: for each subpath in its package.json
 * "exports", the names that subpath's source entry exports, each marked as a value or a type.
 *
 *   node --import tsx scripts/public-api.ts            one line per package subpath and name
 *   node --import tsx scripts/public-api.ts --counts   one line per subpath: how many names
 *
 * Two runs on two revisions, diffed, show what a change added to or took from the surface.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

const root = path.resolve(import.meta.dirname, "..");
const packagesDir = path.join(root, "packages");

interface Entry {
  label: string;
  file: string;
}

function entriesOf(packageDir: string): Entry[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
  const exportsField: Record<string, unknown> = manifest.exports ?? {};
  const entries: Entry[] = [];
  for (const [subpath, target] of Object.entries(exportsField)) {
    const source =
      typeof target === "object" && target !== null
        ? (target as Record<string, unknown>)["@doorbell/source"]
        : undefined;
    if (typeof source !== "string") continue;
    const label = subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    entries.push({ label, file: path.join(packageDir, source) });
  }
  return entries;
}

const entries = fs
  .readdirSync(packagesDir)
  .filter((name) => fs.existsSync(path.join(packagesDir, name, "package.json")))
  .sort()
  .flatMap((name) => entriesOf(path.join(packagesDir, name)));

const program = ts.createProgram(
  entries.map((entry) => entry.file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    jsx: ts.JsxEmit.ReactJSX,
    jsxImportSource: "hono/jsx",
    customConditions: ["@doorbell/source"],
    noEmit: true,
    skipLibCheck: true,
  },
);
const checker = program.getTypeChecker();
const counts = process.argv.includes("--counts");

for (const entry of entries) {
  const source = program.getSourceFile(entry.file);
  const symbol = source && checker.getSymbolAtLocation(source);
  if (!symbol) {
    console.log(`${entry.label}\t(entry not readable: ${path.relative(root, entry.file)})`);
    continue;
  }
  const names = checker
    .getExportsOfModule(symbol)
    .map((exported) => {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const isValue = (target.flags & ts.SymbolFlags.Value) !== 0;
      return `${exported.name}\t${isValue ? "value" : "type"}`;
    })
    .sort();
  if (counts) console.log(`${entry.label}\t${names.length}`);
  else for (const name of names) console.log(`${entry.label}\t${name}`);
}
