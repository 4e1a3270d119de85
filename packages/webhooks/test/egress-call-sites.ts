/**
 * Finds every place in `packages/*\/src` that can send an HTTP request (or mail) of its own, from
 * the TypeScript syntax tree rather than by text, so a comment or a string never counts and an
 * inbound `fetch(request)` handler is not a call:
 * - `global-fetch`: the global `fetch` used as a value (called, or passed on as a default);
 * - `node-client`: `http.request`, `https.get`, `net.connect`, `tls.connect` and their kind;
 * - `sender:<module>`: a value imported from a library that sends requests itself.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

export interface CallSite {
  /** The file, from the repository root, with forward slashes. */
  readonly file: string;
  readonly kind: string;
  readonly line: number;
}

/** Libraries that open connections themselves: each import of a value from one is a call site. */
const SENDERS: readonly RegExp[] = [/^undici$/, /^nodemailer$/, /^got$/, /^axios$/, /^node-fetch$/];
/**
 * Libraries that send only through some of their exports: the names that do (a client transport,
 * a push sender, a key-set fetcher, an authorization server with its own HTTP client).
 */
const SENDING_NAMES: readonly { readonly module: RegExp; readonly names: RegExp }[] = [
  { module: /^@a2a-js\/sdk\/client$/, names: /Factory$|Transport$|Resolver$|^A2AClient$/ },
  { module: /^@a2a-js\/sdk\/server$/, names: /^DefaultRequestHandler$|PushNotificationSender$/ },
  { module: /^@a2a-js\/sdk\/compat\//, names: /PushNotificationSender$/ },
  { module: /^@modelcontextprotocol\/(sdk\/client|client)(\/.*)?$/, names: /Transport$|^auth$/ },
  { module: /^jose$/, names: /^createRemoteJWKSet$/ },
  { module: /^oidc-provider$/, names: /^(default|Provider)$/ },
];
const NODE_CLIENTS: Readonly<Record<string, readonly string[]>> = {
  http: ["request", "get", "Agent"],
  https: ["request", "get", "Agent"],
  net: ["connect", "createConnection", "Socket"],
  tls: ["connect", "TLSSocket"],
};

const bareModule = (name: string) => name.replace(/^node:/, "");

const isDeclaredName = (name: ts.BindingName | ts.PropertyName | undefined): boolean => {
  if (name === undefined) return false;
  if (ts.isIdentifier(name)) return name.text === "fetch";
  if (ts.isObjectBindingPattern(name) || ts.isArrayBindingPattern(name)) {
    return name.elements.some((e) => !ts.isOmittedExpression(e) && isDeclaredName(e.name));
  }
  return false;
};

/** Whether this scope declares its own `fetch` (a parameter, a variable, a function). */
const declaresFetch = (scope: ts.Node): boolean => {
  if (ts.isFunctionLike(scope) && scope.parameters.some((p) => isDeclaredName(p.name))) return true;
  const statements =
    ts.isSourceFile(scope) || ts.isBlock(scope) || ts.isModuleBlock(scope) ? scope.statements : undefined;
  return (
    statements?.some(
      (statement) =>
        (ts.isVariableStatement(statement) &&
          statement.declarationList.declarations.some((d) => isDeclaredName(d.name))) ||
        (ts.isFunctionDeclaration(statement) && statement.name?.text === "fetch") ||
        (ts.isImportDeclaration(statement) &&
          statement.importClause?.namedBindings !== undefined &&
          ts.isNamedImports(statement.importClause.namedBindings) &&
          statement.importClause.namedBindings.elements.some((e) => e.name.text === "fetch")),
    ) === true
  );
};

/** Whether an identifier named `fetch` is the global used as a value, not a name or a local. */
const isGlobalFetchValue = (node: ts.Identifier): boolean => {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent)) return false;
  if (
    (ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isParameter(parent) ||
      ts.isVariableDeclaration(parent) ||
      ts.isFunctionDeclaration(parent) ||
      ts.isBindingElement(parent)) &&
    parent.name === node
  ) {
    return false;
  }
  // `typeof fetch` in a type names the type only.
  if (ts.isTypeQueryNode(parent)) return false;
  for (let scope: ts.Node | undefined = parent; scope !== undefined; scope = scope.parent) {
    if (declaresFetch(scope)) return false;
  }
  return true;
};

/** The call sites in one file's text. */
export function sitesOfText(file: string, text: string): CallSite[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: CallSite[] = [];
  const at = (node: ts.Node, kind: string) =>
    found.push({ file, kind, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  /** Local names bound to node's client modules (`import http from "node:http"`). */
  const nodeModules = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      node.importClause?.isTypeOnly !== true
    ) {
      const module = node.moduleSpecifier.text;
      const bare = bareModule(module);
      const clause = node.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings)
          ? clause.namedBindings.elements
              .filter((e) => !e.isTypeOnly)
              .map((e) => (e.propertyName ?? e.name).text)
          : [];
      const namespace = clause?.namedBindings !== undefined && ts.isNamespaceImport(clause.namedBindings);
      const values = [...(clause?.name ? ["default"] : []), ...named];
      if (SENDERS.some((pattern) => pattern.test(module)) && (values.length > 0 || namespace)) {
        at(node, `sender:${module}`);
      }
      const sending = SENDING_NAMES.find((entry) => entry.module.test(module));
      if (sending !== undefined && (namespace || values.some((name) => sending.names.test(name)))) {
        at(node, `sender:${module}`);
      }
      const clientNames = NODE_CLIENTS[bare];
      if (clientNames !== undefined && (module === bare || module === `node:${bare}`)) {
        if (clause?.name) nodeModules.set(clause.name.text, bare);
        const bindings = clause?.namedBindings;
        if (bindings !== undefined && ts.isNamespaceImport(bindings))
          nodeModules.set(bindings.name.text, bare);
        if (named.some((name) => clientNames.includes(name))) at(node, "node-client");
      }
    }
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const module = nodeModules.get(node.expression.text);
      if (module !== undefined && NODE_CLIENTS[module]?.includes(node.name.text)) at(node, "node-client");
    }
    if (ts.isIdentifier(node) && node.text === "fetch" && isGlobalFetchValue(node)) at(node, "global-fetch");
    // `globalThis.fetch`
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === "fetch" &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "globalThis"
    ) {
      at(node, "global-fetch");
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const walk = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full);
    return /\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });

/** Every call site under `packages/*\/src` of the repository at `root`. */
export function outboundCallSites(root: string): CallSite[] {
  const packages = path.join(root, "packages");
  return fs
    .readdirSync(packages)
    .map((name) => path.join(packages, name, "src"))
    .filter((dir) => fs.existsSync(dir))
    .flatMap(walk)
    .flatMap((full) =>
      sitesOfText(path.relative(root, full).split(path.sep).join("/"), fs.readFileSync(full, "utf8")),
    );
}
