// Publishable packages: every workspace package is built and packed as `npm publish` would, the
// tarballs are installed into a temporary project outside the workspace (dependencies from the
// registry, install scripts run), each package is imported there, SQLite opens through
// @doorbell/store, the mcp-handler binding answers events/list with mcp-handler from the registry,
// and `npx doorbell --version` answers.
//
// better-sqlite3's install script (prebuild-install) is offered, as a local prebuild, the addon the
// workspace's own `npm ci` compiled for this Node: compiling the same sqlite3.c again took a minute
// of CPU and proved nothing about Doorbell. prebuild-install loads the addon before it accepts it;
// a different better-sqlite3 version, ABI or platform finds no prebuild and compiles as before.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, "../../..");
const PACKAGES = readdirSync(join(ROOT, "packages")).sort();
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, "packages", dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };

/** The environment without what `npm test` adds (npm_config_*…), so the inner npm sees no workspace. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== "INIT_CWD") env[name] = value;
  }
  return env;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  exec(command, args, {
    cwd,
    env: { ...cleanEnv(), ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60_000,
  });

/**
 * A folder holding the workspace's compiled better-sqlite3 addon as the tarball prebuild-install
 * looks for ({name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz, glibc's libc empty).
 */
async function localPrebuilds(dir: string): Promise<string> {
  const addon = join(ROOT, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(addon, "package.json"), "utf8")) as { version: string };
  const { platform, arch } = process;
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${platform}-${arch}.tar.gz`;
  await exec("tar", ["-czf", join(dir, name), "-C", addon, "build/Release/better_sqlite3.node"]);
  return dir;
}

const MCP_HANDLER_VERSION = (
  JSON.parse(readFileSync(join(ROOT, "packages/mcp-events/package.json"), "utf8")) as {
    devDependencies: Record<string, string>;
  }
).devDependencies["mcp-handler"]?.replace(/^\^/, "");

/** The binding wired as its README shows, in plain JavaScript, asked for its event catalog. */
const MCP_HANDLER_CHECK = `
import { deliveryMigrations } from "@doorbell/delivery";
import { mcpHandlerEvents, mcpHandlerMigrations } from "@doorbell/mcp-events/mcp-handler";
import { createSealer, generateKeyEntry, Keyring, migrate, openDatabase } from "@doorbell/store";
import { productionPolicy } from "@doorbell/webhooks";
import { createMcpHandler } from "mcp-handler";
import { z } from "zod/v4";
const store = await openDatabase("./events.sqlite");
await migrate(store, [deliveryMigrations, mcpHandlerMigrations]);
const events = mcpHandlerEvents({
  store,
  sealer: createSealer(new Keyring([generateKeyEntry()])),
  policy: productionPolicy(),
  events: [{ name: "order.placed", inputSchema: z.strictObject({}), payloadSchema: z.object({ item: z.string() }), authorize: () => true }],
});
const handler = createMcpHandler((server) => events.register(server, { getPrincipal: (auth) => auth.clientId }));
const request = new Request("http://localhost/mcp", {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "events/list", params: {} }),
});
request.auth = { token: "t", clientId: "pack-check", scopes: [] };
console.log(await (await handler(request)).text());
await events.close();
await store.close();
`;

const work = mkdtempSync(join(tmpdir(), "doorbell-pack-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the packages as published", () => {
  it(
    "pack, install outside the workspace, import each, and run npx doorbell --version",
    async () => {
      expect(PACKAGES).toContain("cli");
      // The tarballs carry dist/: build first (a no-op when `npm run build` already ran).
      await run("npx", ["tsc", "-b", "tsconfig.build.json"], ROOT);

      const tarballs = join(work, "tarballs");
      mkdirSync(tarballs);
      const { stdout } = await run(
        "npm",
        ["pack", "--workspaces", "--json", "--pack-destination", tarballs],
        ROOT,
      );
      const packed = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
      expect(packed.map((p) => p.name).sort()).toEqual(PACKAGES.map((dir) => manifest(dir).name).sort());
      for (const pack of packed) {
        const paths = pack.files.map((file) => file.path);
        expect(paths, pack.name).toEqual(expect.arrayContaining(["README.md", "LICENSE", "package.json"]));
        expect(
          paths.some((path) => path.startsWith("dist/") && path.endsWith(".js")),
          pack.name,
        ).toBe(true);
        expect(
          paths.some((path) => path.startsWith("test/")),
          pack.name,
        ).toBe(false);
      }

      const prebuilds = await localPrebuilds(join(work, "prebuilds"));
      const app = join(work, "app");
      mkdirSync(app);
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({
          name: "doorbell-pack-check",
          private: true,
          type: "module",
          allowScripts: { "better-sqlite3": true },
        }),
      );
      await run(
        "npm",
        [
          "install",
          "--no-audit",
          "--no-fund",
          "--prefer-offline",
          ...packed.map((p) => join(tarballs, p.filename)),
          // The optional peer of @doorbell/mcp-events/mcp-handler, as its users install it.
          `mcp-handler@${MCP_HANDLER_VERSION}`,
        ],
        app,
        { npm_config_better_sqlite3_local_prebuilds: prebuilds },
      );

      for (const dir of PACKAGES) {
        const { name } = manifest(dir);
        const { stdout: exports } = await run(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `console.log(Object.keys(await import(${JSON.stringify(name)})).length)`,
          ],
          app,
        );
        expect(Number(exports.trim()), name).toBeGreaterThan(0);
      }
      // The subpaths that have no test of their own below.
      for (const subpath of ["@doorbell/intents/server", "@doorbell/mcp-endpoint/client"]) {
        const { stdout: exports } = await run(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `console.log(Object.keys(await import(${JSON.stringify(subpath)})).length)`,
          ],
          app,
        );
        expect(Number(exports.trim()), subpath).toBeGreaterThan(0);
      }

      // better-sqlite3 installed for this Node and loaded: a real database through the published store.
      const { stdout: sqlite } = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { openDatabase } from "@doorbell/store";
         const db = await openDatabase("./check.sqlite");
         console.log(db.dialect);
         await db.close();`,
        ],
        app,
      );
      expect(sqlite.trim()).toBe("sqlite");

      // The mcp-handler binding from dist: Events registered on mcp-handler, answered by events/list.
      const { stdout: listed } = await run(
        process.execPath,
        ["--input-type=module", "-e", MCP_HANDLER_CHECK],
        app,
      );
      expect(listed).toContain('"name":"order.placed"');

      const version = await run("npx", ["--no-install", "doorbell", "--version"], app);
      expect(version.stdout).toBe(`${manifest("cli").version}\n`);
      const help = await run("npx", ["--no-install", "doorbell", "serve", "--help"], app);
      expect(help.stdout).toMatch(/^doorbell serve/);
    },
    25 * 60_000,
  );
});
