/**
 * The house figures: a few numbers about the shape of the code, read from every
 * `packages/<pkg>/src/**\/*.{ts,tsx}` (not `*.test.*`/`*.spec.*`, not dist; a `.d.ts` shim counts only
 * if it imports a file of the tree) with the TypeScript parser alone: no program, no type checking.
 *
 *   node --import tsx scripts/house-figures.ts [--json]        (npm run house [-- --json])
 *
 * The import graph has one node per file and one edge per importing file pair: `import`, `import type`,
 * `export … from`, `import("…")` and `import x = require("…")`, relative or `@doorbell/<pkg>[/<sub>]`
 * (resolved to the `@doorbell/source` target of that package's `exports`). An import is type-only when
 * it is `import type`/`export type`, every name in it is marked `type`, or it is an `import("…")` type.
 *
 *  1. import circles: strongly connected components of two or more files of the import graph; again
 *     with type-only imports left out.
 *  2. holder: a graph of holder's top-level folders under src (a file directly under src is its own
 *     node), weighted by file imports between them.
 *     a. folder loops: its strongly connected components of two or more nodes.
 *     b. imports running back up: each node gets a floor, its longest path to the ground in the DAG of
 *        the loops (floor 0 imports no other node); inside a loop the nodes are put in the order with
 *        the fewest imports running up: exactly (dynamic programming over subsets) for loops of up to 16
 *        nodes, else by the greedy feedback-arc heuristic of Eades, Lin and Smyth. A file import runs back
 *        up when its importer sits below what it imports (lower floor, or same loop and lower place).
 *     c. file circles inside holder: strongly connected components of holder's own file graph.
 *  3. names taken from `@doorbell/holder` by forwarder and agent (imports and re-exports; `*` for a
 *     namespace or `export *`), distinct over both.
 *  4. functions over 150 lines: function declarations and expressions, arrow functions, methods,
 *     constructors and accessors, nested ones too, from their first token to their last.
 *  5. `export *` in entry points: the `export *` (and `export * as`) statements in the files each
 *     package's `exports` names, and in the files those reach through `export *` chains.
 *  6. `as unknown as` casts, per package.
 *  7. error classes: classes whose heritage chain reaches `Error` or a built-in `…Error`, through
 *     classes of the tree matched by name (the same file's class first).
 *  8. comments citing an issue: line and block comments matching `issue(s) [#]N` or `#N`.
 *  9. source lines: physical lines per package, and the holder's share of them.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type * as TS from "typescript";

// Required, not imported: Node's scan of a CommonJS module's exports costs ~1 s on typescript.js.
const ts: typeof TS = createRequire(import.meta.url)("typescript");

const root = path.resolve(import.meta.dirname, "..");
const rel = (file: string) => path.relative(root, file);
const asJson = process.argv.includes("--json");

// ---------------------------------------------------------------------------------------------------
// The tree: packages, their entry points, their source files.

interface Package {
  dir: string;
  short: string;
  name: string;
  /** subpath ("." or "./sub") → the absolute source file of its `@doorbell/source` condition */
  entries: Map<string, string>;
}

const packages: Package[] = fs
  .readdirSync(path.join(root, "packages"))
  .filter((name) => fs.existsSync(path.join(root, "packages", name, "package.json")))
  .sort()
  .map((short) => {
    const dir = path.join(root, "packages", short);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    const exportsField = typeof manifest.exports === "object" ? manifest.exports : {};
    const entries = new Map<string, string>();
    for (const [subpath, target] of Object.entries<unknown>(exportsField)) {
      const source = (target as Record<string, unknown>)?.["@doorbell/source"];
      if (typeof source === "string") entries.set(subpath, path.join(dir, source));
    }
    return { dir, short, name: manifest.name as string, entries };
  });
const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
const packageOf = (file: string) => packages.find((pkg) => file.startsWith(pkg.dir + path.sep)) as Package;

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "dist" || entry.name === "node_modules" ? [] : walk(full);
    return /\.tsx?$/.test(entry.name) && !/\.(test|spec)\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const candidates = packages.flatMap((pkg) => walk(path.join(pkg.dir, "src"))).sort();

// ---------------------------------------------------------------------------------------------------
// One pass over each file.

interface Import {
  target: string;
  typeOnly: boolean;
  spec: string;
  names: string[];
}
interface FileFacts {
  file: string;
  pkg: Package;
  lines: number;
  imports: Import[];
  /** `export *` statements: target file (if in the tree) and line */
  exportStars: { spec: string; target: string | undefined; line: number; namespace: boolean }[];
  functions: { name: string; line: number; length: number }[];
  casts: number;
  classes: { name: string; base: string | undefined; line: number }[];
  issueComments: { line: number; text: string }[];
}

const candidateSet = new Set(candidates);

function resolve(from: string, spec: string): string | undefined {
  if (spec.startsWith(".")) {
    const base = path.resolve(path.dirname(from), spec);
    const stem = base.replace(/\.(js|jsx|ts|tsx|mjs|cjs)$/, "");
    const tries = [
      `${stem}.ts`,
      `${stem}.tsx`,
      base,
      path.join(base, "index.ts"),
      path.join(base, "index.tsx"),
    ];
    return tries.find((file) => candidateSet.has(file));
  }
  const match = /^(@doorbell\/[^/]+)(\/.*)?$/.exec(spec);
  const pkg = match && byName.get(match[1] as string);
  if (!pkg) return undefined;
  const target = pkg.entries.get(match?.[2] ? `.${match[2]}` : ".");
  return target && candidateSet.has(target) ? target : undefined;
}

const issuePattern = /\bissues?\s*#?\d+|(?<![\w&#])#\d+\b/i;
const builtinErrors = new Set([
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
]);

function read(file: string): FileFacts {
  const text = fs.readFileSync(file, "utf8");
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const options = {
    languageVersion: ts.ScriptTarget.Latest,
    jsDocParsingMode: ts.JSDocParsingMode.ParseNone,
  };
  const source = ts.createSourceFile(file, text, options, true, kind);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const facts: FileFacts = {
    file,
    pkg: packageOf(file),
    lines: text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    imports: [],
    exportStars: [],
    functions: [],
    casts: 0,
    classes: [],
    issueComments: [],
  };
  const addImport = (specNode: TS.Expression | undefined, typeOnly: boolean, names: string[]) => {
    if (!specNode || !ts.isStringLiteralLike(specNode)) return;
    const target = resolve(file, specNode.text);
    if (target) facts.imports.push({ target, typeOnly, spec: specNode.text, names });
  };
  // Every comment follows a token that ends where some node begins or ends; leading ranges skip the
  // rest of the token's line, trailing ranges take only that, so both are read at both places.
  const seenComments = new Set<number>();
  const seenTrivia = new Set<number>();
  const comments = (at: number) => {
    if (seenTrivia.has(at)) return;
    seenTrivia.add(at);
    const ranges = [
      ...(ts.getTrailingCommentRanges(text, at) ?? []),
      ...(ts.getLeadingCommentRanges(text, at) ?? []),
    ];
    for (const range of ranges) {
      if (seenComments.has(range.pos)) continue;
      seenComments.add(range.pos);
      const comment = text.slice(range.pos, range.end);
      const match = issuePattern.exec(comment);
      if (match) {
        const at = range.pos + match.index;
        const line = lineOf(at);
        const lineText = text.split("\n", line)[line - 1] ?? "";
        facts.issueComments.push({ line, text: lineText.trim().slice(0, 100) });
      }
    }
  };

  const visit = (node: TS.Node): void => {
    comments(node.pos);
    comments(node.end);
    // `{/* … */}` in JSX: the trivia inside empty braces belongs to no node.
    if (ts.isJsxExpression(node) && !node.expression) comments(node.getStart(source) + 1);
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names: string[] = [];
      let allTypes = clause?.isTypeOnly ?? false;
      if (clause && !clause.isTypeOnly) {
        if (clause.name) names.push("default");
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) names.push("*");
        if (bindings && ts.isNamedImports(bindings)) {
          for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
          allTypes =
            !clause.name && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
        }
      } else if (clause?.namedBindings) {
        const bindings = clause.namedBindings;
        if (ts.isNamespaceImport(bindings)) names.push("*");
        else for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
        if (clause.name) names.push("default");
      } else if (clause?.name) names.push("default");
      addImport(node.moduleSpecifier, allTypes, names);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const names =
        clause && ts.isNamedExports(clause)
          ? clause.elements.map((e) => (e.propertyName ?? e.name).text)
          : ["*"];
      const allTypes =
        node.isTypeOnly ||
        (!!clause &&
          ts.isNamedExports(clause) &&
          clause.elements.length > 0 &&
          clause.elements.every((e) => e.isTypeOnly));
      addImport(node.moduleSpecifier, allTypes, names);
      if ((!clause || ts.isNamespaceExport(clause)) && ts.isStringLiteralLike(node.moduleSpecifier)) {
        facts.exportStars.push({
          spec: node.moduleSpecifier.text,
          target: resolve(file, node.moduleSpecifier.text),
          line: lineOf(node.getStart(source)),
          namespace: !!clause,
        });
      }
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      addImport(node.moduleReference.expression, node.isTypeOnly, ["="]);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      addImport(node.arguments[0], false, []);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      addImport(node.argument.literal as TS.Expression, true, []);
    }

    if (
      ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)
    ) {
      if (node.body) {
        const start = lineOf(node.getStart(source));
        const length = lineOf(node.getEnd()) - start + 1;
        if (length > 150) facts.functions.push({ name: functionName(node), line: start, length });
      }
    }
    if (
      ts.isAsExpression(node) &&
      ts.isAsExpression(node.expression) &&
      node.expression.type.kind === ts.SyntaxKind.UnknownKeyword
    ) {
      facts.casts++;
    }
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const heritage = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword);
      const base = heritage?.types[0]?.expression;
      facts.classes.push({
        name: node.name?.text ?? functionName(node),
        base:
          base && (ts.isIdentifier(base) || ts.isPropertyAccessExpression(base))
            ? base.getText(source)
            : undefined,
        line: lineOf(node.getStart(source)),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  comments(source.endOfFileToken.pos);
  return facts;
}

/** A function's name, or the name of what it is assigned to, or "(anonymous)". */
function functionName(node: TS.Node): string {
  const named = node as { name?: TS.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  ) {
    return parent.name.getText();
  }
  if (parent && ts.isCallExpression(parent))
    return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  return "(anonymous)";
}

const all = candidates.map(read).filter((facts) => !facts.file.endsWith(".d.ts") || facts.imports.length > 0);
const byFile = new Map(all.map((facts) => [facts.file, facts]));

// ---------------------------------------------------------------------------------------------------
// Graphs.

type Graph = Map<string, Map<string, number>>;

function graphOf(nodes: Iterable<string>, edges: Iterable<[string, string]>): Graph {
  const graph: Graph = new Map();
  for (const node of nodes) graph.set(node, new Map());
  for (const [from, to] of edges) {
    if (from === to || !graph.has(to)) continue;
    const out = graph.get(from);
    if (out) out.set(to, (out.get(to) ?? 0) + 1);
  }
  return graph;
}

/** Tarjan: strongly connected components, each sorted, in reverse topological order (ground first). */
function components(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      out.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return out;
}

const circles = (graph: Graph) => components(graph).filter((component) => component.length >= 2);

/** Each file's distinct import targets, with whether every import of that pair is type-only. */
function filePairs(files: FileFacts[]): { from: string; to: string; typeOnly: boolean }[] {
  return files.flatMap((facts) => {
    const pairs = new Map<string, boolean>();
    for (const imp of facts.imports) pairs.set(imp.target, (pairs.get(imp.target) ?? true) && imp.typeOnly);
    return [...pairs].map(([to, typeOnly]) => ({ from: facts.file, to, typeOnly }));
  });
}

const pairs = filePairs(all);
const fileGraph = graphOf(
  all.map((facts) => facts.file),
  pairs.map((pair) => [pair.from, pair.to] as [string, string]),
);
const runtimeGraph = graphOf(
  all.map((facts) => facts.file),
  pairs.filter((pair) => !pair.typeOnly).map((pair) => [pair.from, pair.to] as [string, string]),
);
const fileCircles = circles(fileGraph);
const runtimeCircles = circles(runtimeGraph);

// 2. holder
const holderSrc = path.join(root, "packages", "holder", "src");
const holderFiles = all.filter((facts) => facts.file.startsWith(holderSrc + path.sep));
const folderOf = (file: string) => {
  const [first, ...rest] = path.relative(holderSrc, file).split(path.sep);
  return rest.length > 0 ? `${first}/` : (first as string);
};
const holderSet = new Set(holderFiles.map((facts) => facts.file));
const holderPairs = pairs.filter((pair) => holderSet.has(pair.from) && holderSet.has(pair.to));
const folderGraph = graphOf(
  holderFiles.map((facts) => folderOf(facts.file)),
  holderPairs.map((pair) => [folderOf(pair.from), folderOf(pair.to)] as [string, string]),
);
const folderComponents = components(folderGraph);
const folderLoops = folderComponents.filter((component) => component.length >= 2);
const runtimeFolderLoops = circles(
  graphOf(
    folderGraph.keys(),
    holderPairs
      .filter((pair) => !pair.typeOnly)
      .map((pair) => [folderOf(pair.from), folderOf(pair.to)] as [string, string]),
  ),
);
const isFolder = (node: string) => node.endsWith("/");

/** Eades–Lin–Smyth greedy feedback-arc order of a loop's nodes, ground first (importees before importers). */
function greedyOrder(nodes: string[], graph: Graph): string[] {
  const left = new Set(nodes);
  const weight = (from: string, to: string) =>
    left.has(from) && left.has(to) ? (graph.get(from)?.get(to) ?? 0) : 0;
  const outOf = (node: string) => [...left].reduce((sum, other) => sum + weight(node, other), 0);
  const inTo = (node: string) => [...left].reduce((sum, other) => sum + weight(other, node), 0);
  const top: string[] = []; // importers nobody imports, then the greedy picks: the top floors
  const ground: string[] = []; // nodes importing nothing left: the ground
  while (left.size > 0) {
    let moved = true;
    while (moved) {
      moved = false;
      for (const node of [...left].sort()) {
        if (outOf(node) === 0) {
          ground.unshift(node);
          left.delete(node);
          moved = true;
        } else if (inTo(node) === 0) {
          top.push(node);
          left.delete(node);
          moved = true;
        }
      }
    }
    if (left.size === 0) break;
    const pick = [...left]
      .sort()
      .reduce((best, node) => (outOf(node) - inTo(node) > outOf(best) - inTo(best) ? node : best));
    top.push(pick);
    left.delete(pick);
  }
  return [...top, ...ground].reverse();
}

/** The order of a loop's nodes (ground first) with the least weight of imports running up. */
function loopOrder(nodes: string[], graph: Graph): string[] {
  if (nodes.length > 16) return greedyOrder(nodes, graph);
  // best[S]: the least up-weight with the nodes of bitmask S on the lowest places; v on top of S adds
  // the imports from S's nodes to v (a lower node importing a higher one).
  const n = nodes.length;
  const w = nodes.map((to) => nodes.map((from) => graph.get(from)?.get(to) ?? 0));
  const best = new Array<number>(1 << n).fill(Number.POSITIVE_INFINITY);
  const last = new Array<number>(1 << n).fill(-1);
  best[0] = 0;
  for (let set = 0; set < 1 << n; set++) {
    for (let v = 0; v < n; v++) {
      if (set & (1 << v)) continue;
      let cost = best[set] as number;
      for (let u = 0; u < n; u++) if (set & (1 << u)) cost += w[v]?.[u] as number;
      if (cost < (best[set | (1 << v)] as number)) {
        best[set | (1 << v)] = cost;
        last[set | (1 << v)] = v;
      }
    }
  }
  const order: string[] = [];
  for (let set = (1 << n) - 1; set > 0; set &= ~(1 << (last[set] as number))) {
    order.unshift(nodes[last[set] as number] as string);
  }
  return order;
}
const orderMethod = (size: number) =>
  size > 16
    ? "greedy feedback-arc heuristic (Eades-Lin-Smyth)"
    : "exact minimum (subset dynamic programming)";

const floor = new Map<string, number>();
const place = new Map<string, number>();
const componentOf = new Map<string, number>();
folderComponents.forEach((component, i) => {
  for (const node of component) componentOf.set(node, i);
  let level = 0;
  for (const node of component) {
    for (const next of folderGraph.get(node)?.keys() ?? []) {
      if (componentOf.get(next) !== i) level = Math.max(level, (floor.get(next) as number) + 1);
    }
  }
  const order = component.length >= 2 ? loopOrder(component, folderGraph) : component;
  order.forEach((node, at) => {
    floor.set(node, level);
    place.set(node, at);
  });
});
const loopOrders = folderLoops.map((loop) => `loop of ${loop.length} ordered by ${orderMethod(loop.length)}`);
const below = (a: string, b: string) =>
  (floor.get(a) as number) < (floor.get(b) as number) ||
  (floor.get(a) === floor.get(b) &&
    componentOf.get(a) === componentOf.get(b) &&
    (place.get(a) as number) < (place.get(b) as number));
const upImports = holderPairs
  .filter(
    (pair) => folderOf(pair.from) !== folderOf(pair.to) && below(folderOf(pair.from), folderOf(pair.to)),
  )
  .map((pair) => ({ from: rel(pair.from), to: rel(pair.to) }));
const floors = [...new Set(floor.values())]
  .sort((a, b) => a - b)
  .map((level) => ({
    floor: level,
    nodes: [...floor]
      .filter(([, at]) => at === level)
      .map(([node]) => node)
      .sort((a, b) => (place.get(a) as number) - (place.get(b) as number) || a.localeCompare(b)),
  }));
const holderFileCircles = circles(
  graphOf(
    holderFiles.map((facts) => facts.file),
    holderPairs.map((pair) => [pair.from, pair.to] as [string, string]),
  ),
);

// 3. names taken from @doorbell/holder
const takers = ["forwarder", "agent"];
const taken = Object.fromEntries(
  takers.map((short) => {
    const names = new Set<string>();
    for (const facts of all.filter((f) => f.pkg.short === short)) {
      for (const imp of facts.imports)
        if (/^@doorbell\/holder(\/|$)/.test(imp.spec)) for (const n of imp.names) names.add(n);
    }
    return [short, [...names].sort()];
  }),
);
const takenAll = [...new Set(Object.values(taken).flat())].sort();

// 4. long functions
const longFunctions = all
  .flatMap((facts) =>
    facts.functions.map((fn) => ({ at: `${rel(facts.file)}:${fn.line}`, name: fn.name, length: fn.length })),
  )
  .sort((a, b) => b.length - a.length || a.at.localeCompare(b.at));

// 5. export * in entry points
const exportStars: { at: string; spec: string; namespace: boolean }[] = [];
{
  const queue = packages.flatMap((pkg) => [...pkg.entries.values()]).filter((file) => byFile.has(file));
  const seen = new Set(queue);
  while (queue.length > 0) {
    const facts = byFile.get(queue.shift() as string) as FileFacts;
    for (const star of facts.exportStars) {
      exportStars.push({ at: `${rel(facts.file)}:${star.line}`, spec: star.spec, namespace: star.namespace });
      if (star.target && !seen.has(star.target)) {
        seen.add(star.target);
        queue.push(star.target);
      }
    }
  }
  exportStars.sort((a, b) => a.at.localeCompare(b.at, undefined, { numeric: true }));
}

// 6. casts
const casts = Object.fromEntries(
  packages.map((pkg) => [pkg.short, all.filter((f) => f.pkg === pkg).reduce((sum, f) => sum + f.casts, 0)]),
);
const castTotal = Object.values(casts).reduce((a, b) => a + b, 0);

// 7. error classes
const classes = all.flatMap((facts) => facts.classes.map((c) => ({ ...c, file: facts.file })));
const errorClasses: { at: string; name: string; base: string }[] = [];
{
  const isError = new Map<(typeof classes)[number], boolean>();
  const reaches = (c: (typeof classes)[number], trail: Set<unknown>): boolean => {
    if (isError.has(c)) return isError.get(c) as boolean;
    if (!c.base || trail.has(c)) return false;
    trail.add(c);
    const parent =
      classes.find((other) => other.name === c.base && other.file === c.file) ??
      classes.find((other) => other.name === c.base);
    const result = parent ? reaches(parent, trail) : builtinErrors.has(c.base);
    isError.set(c, result);
    return result;
  };
  for (const c of classes) {
    if (reaches(c, new Set()))
      errorClasses.push({ at: `${rel(c.file)}:${c.line}`, name: c.name, base: c.base as string });
  }
}

// 8. issue comments
const issueComments = all.flatMap((facts) =>
  facts.issueComments.map((comment) => ({ at: `${rel(facts.file)}:${comment.line}`, text: comment.text })),
);

// 9. lines
const lines = Object.fromEntries(
  packages.map((pkg) => [pkg.short, all.filter((f) => f.pkg === pkg).reduce((sum, f) => sum + f.lines, 0)]),
);
const lineTotal = Object.values(lines).reduce((a, b) => a + b, 0);
const holderShare = lineTotal === 0 ? 0 : (lines.holder ?? 0) / lineTotal;

// ---------------------------------------------------------------------------------------------------
// Output.

const relAll = (groups: string[][]) => groups.map((group) => group.map(rel));
const figures = {
  files: all.length,
  importCircles: {
    count: fileCircles.length,
    files: fileCircles.flat().length,
    circles: relAll(fileCircles),
  },
  importCirclesRuntime: { count: runtimeCircles.length, circles: relAll(runtimeCircles) },
  holder: {
    folderLoops: {
      nodesInLoops: folderLoops.flat().length,
      foldersInLoops: folderLoops.flat().filter(isFolder).length,
      loops: folderLoops,
      withoutTypeOnly: runtimeFolderLoops,
    },
    upImports: { count: upImports.length, order: loopOrders, floors, imports: upImports },
    fileCircles: { count: holderFileCircles.length, circles: relAll(holderFileCircles) },
  },
  namesFromHolder: { count: takenAll.length, byPackage: taken, names: takenAll },
  longFunctions: { count: longFunctions.length, functions: longFunctions },
  exportStarInEntryPoints: { count: exportStars.length, statements: exportStars },
  asUnknownAs: { count: castTotal, byPackage: casts },
  errorClasses: { count: errorClasses.length, classes: errorClasses },
  issueComments: { count: issueComments.length, comments: issueComments },
  sourceLines: { total: lineTotal, byPackage: lines, holderShare: Number(holderShare.toFixed(4)) },
};

if (asJson) {
  console.log(JSON.stringify(figures, null, 2));
} else {
  const perPackage = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([pkg, n]) => `${pkg} ${n}`)
      .join(", ");
  const rows: [string, string, string][] = [
    [
      "1. import circles",
      `${fileCircles.length} (${fileCircles.flat().length} files); ${runtimeCircles.length} without type-only`,
      "file import SCCs of size >= 2",
    ],
    [
      "2a. holder folder loops",
      `${folderLoops.flat().length} nodes (${folderLoops.flat().filter(isFolder).length} folders) in ${folderLoops.length} loops; ` +
        `${runtimeFolderLoops.flat().length} in ${runtimeFolderLoops.length} without type-only`,
      "SCCs >= 2 of top folders / src files",
    ],
    ["2b. holder imports running up", String(upImports.length), "file imports against the floor order"],
    ["2c. holder file circles", String(holderFileCircles.length), "file SCCs inside holder"],
    [
      "3. names from @doorbell/holder",
      `${takenAll.length} (${takers.map((t) => `${t} ${taken[t]?.length}`).join(", ")})`,
      "distinct names forwarder and agent import",
    ],
    ["4. functions > 150 lines", String(longFunctions.length), "functions, arrows, methods; nested too"],
    [
      "5. export * in entry points",
      String(exportStars.length),
      "in exports' files and their export * chains",
    ],
    ["6. as unknown as", `${castTotal} (${perPackage(casts)})`, "double casts in src"],
    ["7. error classes", String(errorClasses.length), "classes whose chain reaches Error"],
    ["8. comments citing an issue", String(issueComments.length), "comments matching issue N / #N"],
    [
      "9. source lines",
      `${lineTotal}; holder ${(holderShare * 100).toFixed(1)}%`,
      `physical lines of ${all.length} src files`,
    ],
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]?.length ?? 0), 6));
  const pad = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(" | ");
  console.log(pad(["figure", "value", "meaning"]));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const row of rows) console.log(pad(row));

  const section = (title: string, items: string[]) => {
    console.log(`\n${title}`);
    for (const item of items.length > 0 ? items : ["(none)"]) console.log(`  ${item}`);
  };
  const listCircles = (groups: string[][]) =>
    groups.flatMap((group, i) => [
      `circle ${i + 1} (${group.length} files):`,
      ...group.map((f) => `  ${rel(f)}`),
    ]);
  section("1. import circles (all imports)", listCircles(fileCircles));
  section("1. import circles without type-only imports", listCircles(runtimeCircles));
  section(
    "2a. holder folder loops",
    folderLoops.map((loop) => `${loop.length}: ${loop.join(" ")}`),
  );
  section(
    "2a. holder folder loops without type-only imports",
    runtimeFolderLoops.map((loop) => `${loop.length}: ${loop.join(" ")}`),
  );
  section("2b. holder floors (ground first; a loop's nodes in its order)", [
    ...floors.map((level) => `floor ${level.floor}: ${level.nodes.join(" ")}`),
    ...loopOrders,
  ]);
  section(
    "2b. holder imports running up",
    upImports.map((imp) => `${imp.from} -> ${imp.to}`),
  );
  section("2c. holder file circles", listCircles(holderFileCircles));
  section(
    "3. names from @doorbell/holder",
    takers.map((t) => `${t} (${taken[t]?.length}): ${taken[t]?.join(", ")}`),
  );
  section(
    "4. functions over 150 lines",
    longFunctions.map((fn) => `${fn.length}  ${fn.at}  ${fn.name}`),
  );
  section(
    "5. export * in entry points",
    exportStars.map((star) => `${star.at}  export *${star.namespace ? " as …" : ""} from "${star.spec}"`),
  );
  section("6. as unknown as per package", [perPackage(casts) || "0"]);
  section(
    "7. error classes",
    errorClasses.map((c) => `${c.at}  ${c.name} extends ${c.base}`),
  );
  section(
    "8. comments citing an issue",
    issueComments.map((c) => `${c.at}  ${c.text}`),
  );
  section(
    "9. source lines per package",
    Object.entries(lines).map(([pkg, n]) => `${pkg.padEnd(12)} ${String(n).padStart(6)}`),
  );
}
