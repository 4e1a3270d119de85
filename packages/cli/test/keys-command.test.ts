// Issue #14 item 5: a second holder process with a data folder of its own (so keys of its own)
// refuses to start on the first one's database with one line naming the fix; `doorbell keys
// export` on the first and `doorbell keys import` on the second make it start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHolder } from "@doorbell/holder";
import { forEachEngine } from "@doorbell/store/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/main.js";
import { captureIo } from "./command-harness.js";

const silent = pino({ level: "silent" });

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("a process with other keys is refused; export then import shares them", async () => {
    const database = (await engine.createDatabase()).url;
    const first = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-keys-a-"));
    const second = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-keys-b-"));
    const start = (dataDir: string) =>
      createHolder({ database, dataDir, env: {}, log: silent, demo: false, events: false });
    const a = await start(first);
    try {
      const refused = await start(second).then(
        async (holder) => {
          await holder.close();
          return undefined;
        },
        (error: unknown) => error as Error & { code?: string },
      );
      expect(refused?.code).toBe("ERR_STORE_KEYRING_MISMATCH");
      expect(refused?.message).not.toContain("\n");
      expect(refused?.message).toMatch(/doorbell keys export/);

      const exported = captureIo({ DOORBELL_DATA_DIR: first });
      expect(await run(["keys", "export"], exported.io)).toBe(0);
      expect(exported.out()).toMatch(/^k[0-9a-f]{8}:[A-Za-z0-9+/=]+\n$/);
      expect(exported.err()).not.toContain(exported.out().trim());
      const file = path.join(os.tmpdir(), `doorbell-keys-${process.pid}-${Date.now()}`);
      fs.writeFileSync(file, exported.out(), { mode: 0o600 });

      // The second data folder already has a generated key file: import refuses to drop it silently.
      const blocked = captureIo();
      expect(await run(["keys", "import", file, "--data-dir", second], blocked.io)).not.toBe(0);
      expect(blocked.err()).toMatch(/--replace/);
      const imported = captureIo();
      expect(await run(["keys", "import", file, "--data-dir", second, "--replace"], imported.io)).toBe(0);
      expect(fs.statSync(path.join(second, "seal-keys")).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(second).some((name) => name.startsWith("seal-keys.replaced-"))).toBe(true);
      fs.rmSync(file);

      const b = await start(second);
      await b.close();
    } finally {
      await a.close();
    }
  });
});
