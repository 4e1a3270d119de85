import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  catalogueFormatFromPath,
  checkCatalogueFile,
  parseCatalogueFile,
  readCatalogueFile,
  streamCatalogueFile,
} from "../../src/catalogue/catalogue-file.js";

// `doorbell catalogue import FILE.json|csv`: every problem comes with the line it is on, all at once.

const HEADER =
  "ref,title,category,price,currency,country,region,make,model,year,mileageKm,fuel,kind,rooms,areaM2,url";

describe("CSV catalogue", () => {
  it("parses records with quoting, embedded separators, quotes and line breaks", async () => {
    const text = [
      HEADER,
      'A-1,"Škoda Octavia, 2.0 TDI",vehicles,14900,EUR,SK,SK-BC,Škoda,Octavia,2018,142000,diesel,,,,https://catalogue.example/A-1',
      '"B-2","Byt ""3+kk""\nPraha",property,6490000,CZK,CZ,CZ-10,,,,,,flat,3,72.5,',
      "",
    ].join("\r\n");
    const parsed = await parseCatalogueFile(text, { format: "csv" });
    expect(parsed.problems).toEqual([]);
    expect(parsed.offers).toHaveLength(2);
    expect(parsed.offers[0]).toEqual({
      source: { kind: "catalogue", ref: "A-1" },
      title: "Škoda Octavia, 2.0 TDI",
      category: "vehicles",
      price: { amount: 14_900, currency: "EUR" },
      location: { country: "SK", region: "SK-BC" },
      url: "https://catalogue.example/A-1",
      attributes: { make: "Škoda", model: "Octavia", year: 2018, mileageKm: 142_000, fuel: "diesel" },
    });
    expect(parsed.offers[1]?.title).toBe('Byt "3+kk"\nPraha');
    expect(parsed.offers[1]?.attributes).toEqual({ kind: "flat", rooms: 3, areaM2: 72.5 });
  });

  it("reports each bad row on its own line, counting lines inside quoted fields", async () => {
    const text = [
      HEADER, // 1
      "A-1,Octavia,vehicles,14 900,EUR,SK,SK-BC,,,,,,,,,", // 2: price with a space
      '"A-2","two\nline title",vehicles,9000,EUR,SK,SK-XX,,,,,,,,,', // 3-4: unknown region
      "A-3,Fabia,vehicles,9000,USD,SK,,,,,,,,,,", // 5: currency
      "A-4,Flat,property,9000,EUR,SK,,,,,,,,2.5,,", // 6: rooms not whole
      "A-5,Golf,vehicles,9000,EUR,SK,,,,,,,flat,,,", // 7: kind on a vehicle
      "A-1,Dup,vehicles,9000,EUR,SK,,,,,,,,,,", // 8: duplicate ref (of line 2? no: line 2 failed)
      "A-6,Short,vehicles,9000", // 9: too few fields
      "A-7,Octavia,vehicles,9000,EUR,SK,,,,,,,,,,ftp://x", // 10: url scheme
      "A-8,Octavia,vehicles,9000,EUR,SK,,,,,,,,,,", // 11: fine
      "A-8,Octavia again,vehicles,9000,EUR,SK,,,,,,,,,,", // 12: duplicate of 11
    ].join("\n");
    const { problems, offers } = await parseCatalogueFile(text, { format: "csv" });
    expect(problems).toEqual([
      { line: 2, message: 'price must be a whole number of digits such as 12500 (got "14 900")' },
      {
        line: 3,
        message: expect.stringMatching(/^region must be an ISO 3166-2 region code of SK .*"SK-XX"/),
      },
      { line: 5, message: 'currency must be one of "EUR", "CZK" (got "USD")' },
      { line: 6, message: 'rooms must be a whole number of digits (got "2.5")' },
      { line: 7, message: "kind applies to property offers, not vehicles" },
      {
        line: 9,
        message: "this row has 4 fields but the header has 16 (a separator inside an unquoted field?)",
      },
      { line: 10, message: 'url must be an absolute http or https URL (got "ftp://x")' },
      { line: 12, message: 'ref "A-8" repeats the offer on line 11' },
    ]);
    expect(offers.map((o) => o.source.ref)).toEqual(["A-1", "A-8"]); // line 8 is fine on its own
  });

  it("checks the header: unknown, duplicate and missing columns, all on line 1", async () => {
    const { problems } = await parseCatalogueFile("ref,title,colour,title,price\nx,y,z,w,1\n", {
      format: "csv",
    });
    expect(problems).toEqual([
      { line: 1, message: expect.stringContaining('column 3 "colour" is not a catalogue column') },
      { line: 1, message: 'column "title" appears twice in the header' },
      { line: 1, message: expect.stringContaining('the header has no "category" column') },
      { line: 1, message: expect.stringContaining('the header has no "currency" column') },
      { line: 1, message: expect.stringContaining('the header has no "country" column') },
    ]);
  });

  it("accepts semicolons, snake_case and any case in the header; reports an unclosed quote where it opens", async () => {
    const ok = await parseCatalogueFile(
      "REF;Title;category;price;currency;country;published_at;mileage_km\nA;B;vehicles;100;EUR;SK;2026-11-01T00:00:00Z;5000\n",
      { format: "csv" },
    );
    expect(ok.problems).toEqual([]);
    expect(ok.offers[0]?.publishedAt).toBe("2026-11-01T00:00:00.000Z");
    expect(ok.offers[0]?.attributes).toEqual({ mileageKm: 5000 });
    const open = await parseCatalogueFile(`${HEADER}\nA,B,vehicles,1,EUR,SK,,,,,,,,,,\n"C,unclosed\n\n`, {
      format: "csv",
    });
    expect(open.problems).toEqual([{ line: 3, message: 'a quoted field is not closed: a " is missing' }]);
    expect((await parseCatalogueFile("", { format: "csv" })).problems[0]?.message).toMatch(/empty/);
  });
});

describe("JSON catalogue", () => {
  const offer = (ref: string, more = "") =>
    `{ "source": { "ref": "${ref}" }, "title": "Octavia", "category": "vehicles",
    "price": { "amount": 9000, "currency": "EUR" }, "location": { "country": "SK" }${more} }`;

  it("parses an array of offers, defaulting source.kind; publishedAt only when given", async () => {
    const parsed = await parseCatalogueFile(
      `[${offer("a")}, ${offer("b", ', "publishedAt": "2026-11-01T10:00:00+01:00"')}]`,
      {
        format: "json",
      },
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.offers.map((o) => [o.source, o.publishedAt])).toEqual([
      [{ kind: "catalogue", ref: "a" }, undefined],
      [{ kind: "catalogue", ref: "b" }, "2026-11-01T09:00:00.000Z"],
    ]);
  });

  it("reports problems at the line where each offer starts, and a syntax error where it is (reading stops there)", async () => {
    const text = [
      "[", // 1
      `  ${offer("a")},`, // 2-3
      `  ${offer("b", ', "price": 5')},`, // 4-5: duplicate key price, the last wins: 5 is price.amount
      `  ${offer("a")},`, // 6-7: duplicate ref
      '  { "source": { "ref": "c" }, "title": "x", ', // 8
      '    "category": "vehicles", "oops" }', // 9: syntax error
      `, ${offer("a")}`, // 10-11: not read (JSON cannot be resynchronised after a syntax error)
      "]",
    ].join("\n");
    const { problems } = await parseCatalogueFile(text, { format: "json" });
    expect(problems).toEqual([
      // "price": 5 is the short spelling of price.amount, so the currency is what is missing.
      { line: 4, message: 'price.currency is required (one of "EUR", "CZK")' },
      { line: 6, message: 'ref "a" repeats the offer on line 2' },
      { line: 9, message: expect.stringMatching(/^offer 4 is not valid JSON: /) },
    ]);
  });

  it("reports a file that is not an array, an unclosed array, empty elements and trailing text", async () => {
    expect((await parseCatalogueFile('{"offers": []}', { format: "json" })).problems).toEqual([
      { line: 1, message: "a JSON catalogue is an array of offers: it must start with [" },
    ]);
    expect((await parseCatalogueFile(`[\n${offer("a")}\n`, { format: "json" })).problems).toEqual([
      { line: 4, message: "the array is not closed: a ] is missing at the end" },
    ]);
    expect(
      (await parseCatalogueFile(`[\n${offer("a")},\n,\n${offer("b")}]`, { format: "json" })).problems,
    ).toEqual([
      { line: 4, message: "offer 2: a value is missing (two commas in a row, or a comma before ])" },
    ]);
    expect((await parseCatalogueFile("[]\n\nmore", { format: "json" })).problems).toEqual([
      { line: 3, message: "unexpected text after the closing ] of the array" },
    ]);
    expect(await parseCatalogueFile("\uFEFF[]", { format: "json" })).toEqual({ offers: [], problems: [] });
  });

  it("readCatalogueFile throws ERR_HOLDER_INVALID listing 'line N:' for each problem", async () => {
    await expect(
      readCatalogueFile(`[\n${offer("a", ', "url": "nope"')}\n]`, { format: "json" }),
    ).rejects.toThrow(
      /the catalogue file has 1 problem\(s\):\nline 2: url must be an absolute http or https URL/,
    );
    expect(catalogueFormatFromPath("/tmp/Offers.CSV")).toBe("csv");
    expect(catalogueFormatFromPath("offers.json")).toBe("json");
    expect(catalogueFormatFromPath("offers.xml")).toBeUndefined();
  });
});

describe("both spellings in both formats (issue 16 item 6)", () => {
  const expected = {
    source: { kind: "catalogue", ref: "A-1", seller: "Autobazár" },
    title: "Octavia",
    category: "vehicles",
    price: { amount: 9000, currency: "EUR" },
    location: { country: "SK", region: "SK-BL" },
    attributes: { make: "Škoda", year: 2019 },
  };

  it("CSV takes the offer's own paths as column names", async () => {
    const text =
      "source.ref,source.seller,title,category,price.amount,price.currency,location.country,location.region,attributes.make,attributes.year\n" +
      "A-1,Autobazár,Octavia,vehicles,9000,EUR,SK,SK-BL,Škoda,2019\n";
    const parsed = await parseCatalogueFile(text, { format: "csv" });
    expect(parsed.problems).toEqual([]);
    expect(parsed.offers).toEqual([expected]);
  });

  it("JSON takes the CSV's short names, and refuses a field given both ways", async () => {
    const flat = `[{ "ref": "A-1", "seller": "Autobazár", "title": "Octavia", "category": "vehicles",
      "price": 9000, "currency": "EUR", "country": "SK", "region": "SK-BL", "make": "Škoda", "year": 2019 }]`;
    const parsed = await parseCatalogueFile(flat, { format: "json" });
    expect(parsed.problems).toEqual([]);
    expect(parsed.offers).toEqual([expected]);
    const both = `[\n{ "ref": "A-1", "source": { "ref": "A-2" }, "title": "x", "category": "vehicles",
      "price": { "amount": 1, "currency": "EUR" }, "location": { "country": "SK" } }]`;
    expect((await parseCatalogueFile(both, { format: "json" })).problems).toEqual([
      { line: 2, message: "source.ref is given twice (as ref and as source.ref); give one" },
    ]);
  });
});

describe("catalogue files are streamed from disk", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "catalogue-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const row = (i: number) => `R-${i},Octavia ${i},vehicles,${9000 + i},EUR,SK,SK-BL\n`;

  it("checks a file larger than one read without keeping its offers, and reports its last bad line", async () => {
    const path = join(dir, "big.csv");
    const lines = ["ref,title,category,price,currency,country,region\n"];
    for (let i = 1; i <= 20_000; i++) lines.push(row(i));
    lines.push("R-last,Broken,vehicles,12 000,EUR,SK,SK-BL\n"); // line 20,002
    writeFileSync(path, lines.join(""));
    await expect(checkCatalogueFile(path, { format: "csv" })).rejects.toThrow(
      /1 problem\(s\):\nline 20002: price must be a whole number/,
    );
    writeFileSync(path, lines.slice(0, -1).join(""));
    expect(await checkCatalogueFile(path, { format: "csv" })).toEqual({ offers: 20_000 });
    let count = 0;
    for await (const offer of streamCatalogueFile(path, { format: "csv" })) {
      count++;
      if (count === 20_000) expect(offer.source.ref).toBe("R-20000");
    }
    expect(count).toBe(20_000);
  });

  it("reports bytes that are not UTF-8 at their line, and passes on a file that cannot be opened", async () => {
    const path = join(dir, "latin1.csv");
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from("ref,title,category,price,currency,country\nA,ok,vehicles,1,EUR,SK\n"),
        Buffer.from([0x42, 0xe1, 0x0a]), // "Bá" in Latin-1
      ]),
    );
    await expect(checkCatalogueFile(path, { format: "csv" })).rejects.toThrow(
      /line 1: the file is not UTF-8/,
    );
    await expect(checkCatalogueFile(join(dir, "missing.csv"), { format: "csv" })).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("streams a JSON file with a minified single line", async () => {
    const path = join(dir, "one-line.json");
    const offers = Array.from({ length: 3000 }, (_, i) => ({
      ref: `J-${i}`,
      title: `Octavia ${i}`,
      category: "vehicles",
      price: 9000,
      currency: "EUR",
      country: "SK",
    }));
    writeFileSync(path, JSON.stringify(offers));
    expect(await checkCatalogueFile(path, { format: "json" })).toEqual({ offers: 3000 });
  });
});
