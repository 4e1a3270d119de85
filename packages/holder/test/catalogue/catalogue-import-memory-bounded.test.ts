/**
 * Issue 16 item 6: a catalogue import holds a bounded number of offers whatever the file's size.
 * Measured without timing or memory figures: while a stream of offers is imported, the offers read
 * but not yet committed never exceed one batch (500), and the import commits as it reads, not at
 * the end. The check pass keeps at most REFS_IN_MEMORY refs in memory and still names the first
 * line of a ref repeated after the rest moved to disk.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forEachEngine } from "@doorbell/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCatalogueFile, streamCatalogueFile } from "../../src/catalogue/catalogue-file.js";
import { REFS_IN_MEMORY, seenRefs } from "../../src/catalogue/catalogue-refs.js";
import type { CatalogueOfferInput } from "../../src/model/services.js";
import { activeIntent, startServices } from "../support/services-harness.js";

const BATCH = 500; // the offer service's default batch size
const HEADER = "ref,title,category,price,currency,country,region,make,model\n";
const row = (i: number) =>
  `R-${i},Škoda Octavia ${i},vehicles,${12_000 + (i % 9)},EUR,SK,SK-BL,Škoda,Octavia\n`;

function writeCsv(dir: string, rows: number, extra = ""): string {
  const file = path.join(dir, `offers-${rows}.csv`);
  const fd = fs.openSync(file, "w");
  fs.writeSync(fd, HEADER);
  let chunk = "";
  for (let i = 1; i <= rows; i++) {
    chunk += row(i);
    if (chunk.length > 64 * 1024) {
      fs.writeSync(fd, chunk);
      chunk = "";
    }
  }
  fs.writeSync(fd, chunk + extra);
  fs.closeSync(fd);
  return file;
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "doorbell-import-memory-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

forEachEngine({ describe, beforeAll, afterAll }, (engine) => {
  it("holds at most one batch of offers read but not committed, and commits while it reads", async () => {
    const h = await startServices(engine);
    await activeIntent(h, "bounded@example.sk");
    const file = writeCsv(dir, 2_600);
    const committed = async () =>
      Number(
        (
          await h.ctx.store.db
            .selectFrom("holder_offers")
            .select((eb) => eb.fn.countAll().as("n"))
            .where("source_kind", "=", "catalogue")
            .executeTakeFirstOrThrow()
        ).n,
      );
    let read = 0;
    let mostHeld = 0;
    const committedWhileReading: number[] = [];
    async function* counted(): AsyncGenerator<CatalogueOfferInput> {
      for await (const offer of streamCatalogueFile(file, { format: "csv" })) {
        // Counted where a batch fills (the 500th offer of each) and every 50 offers between.
        if (read % 50 === 0 || read % 50 === 49) {
          const done = await committed();
          mostHeld = Math.max(mostHeld, read - done);
          committedWhileReading.push(done);
        }
        read++;
        yield offer;
      }
    }
    const result = await h.services.offers.importCatalogue(counted());
    expect(result).toEqual({ inserted: 2_600, updated: 0, matched: 2_600 });
    expect(read).toBe(2_600);
    expect(mostHeld).toBe(BATCH - 1);
    // Five full batches were committed before the last offers were read.
    expect(committedWhileReading.at(-1)).toBe(5 * BATCH);
    expect(await committed()).toBe(2_600);
  }, 180_000);
});

describe("the check pass's refs", () => {
  it("keeps at most its in-memory share and finds a repeat among refs moved to disk", () => {
    const refs = seenRefs(3);
    try {
      expect(refs.firstLine("a", 2)).toBeUndefined();
      expect(refs.firstLine("b", 3)).toBeUndefined();
      expect(refs.firstLine("a", 4)).toBe(2);
      expect(refs.firstLine("c", 5)).toBeUndefined();
      expect(refs.inMemory).toBe(3);
      expect(refs.onDisk).toBe(false);
      expect(refs.firstLine("d", 6)).toBeUndefined(); // the fourth: all of them move to disk
      expect(refs.inMemory).toBe(0);
      expect(refs.onDisk).toBe(true);
      expect(refs.firstLine("b", 7)).toBe(3);
      expect(refs.firstLine("d", 8)).toBe(6);
      expect(refs.firstLine("e", 9)).toBeUndefined();
      expect(refs.firstLine("e", 10)).toBe(9);
    } finally {
      refs.close();
    }
    expect(refs.onDisk).toBe(false);
  });

  it("names the first line of a ref repeated past the refs kept in memory", async () => {
    const rows = REFS_IN_MEMORY + 1_000;
    // Line 1 is the header, so R-i is on line i + 1; the repeat of R-7 comes last.
    const file = writeCsv(dir, rows, row(7));
    await expect(checkCatalogueFile(file, { format: "csv" })).rejects.toThrow(
      `line ${rows + 2}: ref "R-7" repeats the offer on line 8`,
    );
    const clean = writeCsv(dir, rows);
    expect(await checkCatalogueFile(clean, { format: "csv" })).toEqual({ offers: rows });
  }, 180_000);
});
