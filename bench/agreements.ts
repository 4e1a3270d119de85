import {
  createPrivateKey,
  createPublicKey,
  sign as edSign,
  verify as edVerify,
  webcrypto,
} from "node:crypto";
import { readFileSync } from "node:fs";
import {
  checkRecord,
  createKeyResolver,
  importSigningKey,
  MESSAGE_CONTEXT,
  type Message,
  type PrivateJwk,
  signMessage,
  staticKeyPages,
  verifyMessage,
} from "@doorbell/agreements";

// Messages signed and verified per second, and records checked per second, beside raw
// node:crypto Ed25519 over the same bytes (the limit) and raw WebCrypto Ed25519 (what jose uses).
// jose signs through WebCrypto, which is asynchronous, so this file times async candidates the
// same way harness.compare() times sync ones: interleaved rounds, median of 9, after a warm-up.

const vectors = new URL("../packages/agreements/vectors/", import.meta.url);
const read = (path: string): unknown => JSON.parse(readFileSync(new URL(path, vectors), "utf8"));

type Candidate = readonly [name: string, fn: () => unknown];

async function calibrate(fn: () => unknown): Promise<number> {
  for (let batch = 1; ; batch *= 2) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) await fn();
    if (Number(process.hrtime.bigint() - start) > 10e6) return batch;
  }
}

/** CPU microseconds this process spent (all its threads, so WebCrypto's worker pool counts too). */
const cpuMicros = (since?: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** Operations per CPU second of `fn` over one window of `windowMs` CPU milliseconds. */
async function cpuRate(fn: () => unknown, batch: number, windowMs: number): Promise<number> {
  let ops = 0;
  let used = 0;
  const start = process.cpuUsage();
  while (used < windowMs * 1e3) {
    for (let i = 0; i < batch; i++) await fn();
    ops += batch;
    used = cpuMicros(start);
  }
  return (ops / used) * 1e6;
}

// V8 on Node 20 optimises a path this long only after a few thousand calls (about 5,000 record
// checks, 2 s of CPU), so without a warm-up the median falls inside tier-up and measures the JIT,
// not the code. Tier-up follows call counts, so each candidate first runs 10,000 times and at
// least 1 s of CPU: the steady state a server reaches. Its first 1,000 calls are reported too.
const WARM_CALLS = 10_000;
const COLD_CALLS = 1_000;

async function warmUp(fn: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  let coldRate = 0;
  for (let i = 1; i <= WARM_CALLS || cpuMicros(start) < 1e6; i++) {
    await fn();
    if (i === COLD_CALLS) coldRate = (COLD_CALLS / cpuMicros(start)) * 1e6;
  }
  return coldRate;
}

// Figures are operations per second of CPU time, not of wall time: on a shared machine the wall
// clock mostly measures the other processes, and the ratio between candidates is what counts. The
// candidates run in rounds, forwards in one and backwards in the next, and each ratio is the median
// of the ratios within a round: ours and the baseline then ran moments apart under the same load,
// and a round disturbed by a burst elsewhere does not move the median.
async function compareAsync(
  title: string,
  candidates: readonly Candidate[],
  rounds = 9,
  roundMs = 200,
): Promise<void> {
  const cold: number[] = [];
  for (const [, fn] of candidates) cold.push(await warmUp(fn));
  const batches: number[] = [];
  for (const [, fn] of candidates) batches.push(await calibrate(fn));
  const rates: number[][] = candidates.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = candidates.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const [, fn] = candidates[index] as Candidate;
      rates[index]?.push(await cpuRate(fn, batches[index] as number, roundMs));
    }
  }
  printPaired(title, candidates, rates, cold);
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Ours (the first) beside each baseline: median rates, and the median and range of the per-round ratios. */
function printPaired(
  title: string,
  candidates: readonly Candidate[],
  rates: readonly number[][],
  cold: readonly number[],
): void {
  console.log(`\n${title}`);
  const width = Math.max(...candidates.map(([name]) => name.length));
  const ours = rates[0] as number[];
  const whole = (value: number) => Math.round(value).toLocaleString("en-US");
  candidates.forEach(([name], index) => {
    const own = rates[index] as number[];
    const note = `   (first ${COLD_CALLS.toLocaleString("en-US")} calls: ${whole(cold[index] as number)} ops/s)`;
    const ratios = own.map((value, round) => (ours[round] as number) / value);
    const ratio =
      index === 0
        ? ""
        : `   ours/this = ${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
    console.log(`  ${name.padEnd(width)}  ${whole(median(own)).padStart(12)} ops/s${ratio}${note}`);
  });
}

export async function benchAgreements(): Promise<void> {
  const jwk = (read("keys/seller.test-key.json") as { jwk: PrivateJwk }).jwk;
  const key = await importSigningKey(jwk);
  const keyObject = createPrivateKey({ key: { ...jwk }, format: "jwk" });
  const publicObject = createPublicKey(keyObject);
  const webPrivate = await webcrypto.subtle.importKey("jwk", { ...jwk }, { name: "Ed25519" }, false, [
    "sign",
  ]);
  const webPublic = await webcrypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x },
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const jku = "https://api.stackshift.cloud/.well-known/agent-agreements/pty_seller00000000000001.json";
  const pages = await staticKeyPages([read("key-pages/seller.json"), read("key-pages/buyer.json")]);
  const resolveKey = createKeyResolver({ source: pages, txt: async () => [] });

  const quote = (read("messages.json") as { valid: { name: string; input: Message }[] }).valid.find(
    (v) => v.name === "quote without an ask",
  )?.input as Message;
  if (quote["@context"][1] !== MESSAGE_CONTEXT[1])
    throw new Error("the quote vector is not an agent-intents/1 message");
  const { jws, parsed } = await signMessage(quote, key, { jku });
  const [h, p] = jws.split(".") as [string, string];
  const signingInput = Buffer.from(`${h}.${p}`);
  const rawSignature = edSign(null, signingInput, keyObject);
  if (!edVerify(null, signingInput, publicObject, rawSignature))
    throw new Error("raw Ed25519 does not verify");

  console.log(
    `Node ${process.version}; a ${parsed.bytes.byteLength} B quote (JWS ${jws.length} chars); each figure is operations per CPU second (this process, all threads), the median of 9 rounds of 200 ms CPU after each candidate's warm-up (candidates in alternating order); each ratio is the median of the per-round ratios, with their range; one operation at a time.`,
  );
  await compareAsync("sign a message (validate, RFC 8785, JWS EdDSA)", [
    ["doorbell signMessage", () => signMessage(quote, key, { jku })],
    ["raw WebCrypto Ed25519 sign", () => webcrypto.subtle.sign("Ed25519", webPrivate, signingInput)],
    ["raw node:crypto Ed25519 sign", () => edSign(null, signingInput, keyObject)],
  ]);
  await compareAsync("verify a message (header, schema, canonical form, trust rule, signature)", [
    ["doorbell verifyMessage", () => verifyMessage(jws, resolveKey)],
    [
      "raw WebCrypto Ed25519 verify",
      () => webcrypto.subtle.verify("Ed25519", webPublic, rawSignature, signingInput),
    ],
    ["raw node:crypto Ed25519 verify", () => edVerify(null, signingInput, publicObject, rawSignature)],
  ]);

  // A two-signature record: three signatures (offer, acceptance, seal) and six workflow steps.
  const recordBytes = readFileSync(new URL("records/two-signatures-quote.json", vectors));
  const record = JSON.parse(recordBytes.toString("utf8")) as {
    offer: { jws: string };
    acceptance: { jws: string };
    seal: string;
  };
  const buyerJwk = (read("keys/buyer.test-key.json") as { jwk: PrivateJwk }).jwk;
  const buyerPublic = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: buyerJwk.x }, format: "jwk" });
  const parts = [
    [record.offer.jws, publicObject],
    [record.acceptance.jws, buyerPublic],
    [record.seal, publicObject],
  ].map(([token, publicKey]) => {
    const [a, b, s] = (token as string).split(".") as [string, string, string];
    return {
      input: Buffer.from(`${a}.${b}`),
      signature: Buffer.from(s, "base64url"),
      publicKey: publicKey as typeof publicObject,
    };
  });
  if (!parts.every((x) => edVerify(null, x.input, x.publicKey, x.signature)))
    throw new Error("the record's signatures do not verify raw");
  const checked = await checkRecord(recordBytes, { source: pages, txt: async () => [] });
  if (checked.result !== "two_signatures")
    throw new Error(`the bench record does not check out: ${checked.summary}`);
  await compareAsync("check a two-signature record (six steps, three signatures)", [
    ["doorbell checkRecord", () => checkRecord(recordBytes, { resolveKey })],
    [
      "raw node:crypto 3 × Ed25519 verify",
      () => parts.every((x) => edVerify(null, x.input, x.publicKey, x.signature)),
    ],
  ]);
}
