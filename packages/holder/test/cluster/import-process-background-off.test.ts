// Issue 14 (the soak): a process that only imports (`doorbell catalogue import`) takes no part in
// background work and runs no delivery worker, so the doorbells its import queues are delivered
// by the serve processes under their egress policy. Before, an importer configured with SMTP ran
// under the production policy and failed every doorbell to the serve processes' http endpoints.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "@doorbell/store";
import { afterEach, describe, expect, it } from "vitest";
import { createHolder, type Holder } from "../../src/index.js";

const holders: Holder[] = [];
afterEach(async () => {
  for (const holder of holders.splice(0)) await holder.close();
});

const leases = async (holder: Holder) =>
  (await sql<{ n: number }>`select count(*) as n from store_leadership`.execute(holder.context.store.db))
    .rows[0]?.n;

describe("createHolder({ background })", () => {
  it("false takes no lease for background work; the default takes one at start", async () => {
    const importer = await createHolder({
      dataDir: mkdtempSync(join(tmpdir(), "doorbell-importer-")),
      background: false,
      accessLog: false,
    });
    holders.push(importer);
    expect(Number(await leases(importer))).toBe(0);

    const server = await createHolder({
      dataDir: mkdtempSync(join(tmpdir(), "doorbell-server-")),
      accessLog: false,
    });
    holders.push(server);
    expect(Number(await leases(server))).toBe(1);
  });
});
