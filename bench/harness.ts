/**
 * A tiny benchmark harness. Candidates are timed in interleaved rounds (A, B, C, A, B, C, …)
 * so background load hits all of them alike, and each figure is the median of its rounds.
 */
export interface Measurement {
  name: string;
  opsPerSecond: number;
  /** Printed after the figure, e.g. the rate before the JIT warmed up. */
  note?: string;
}

type Candidate = readonly [name: string, fn: () => unknown];

export function compare(candidates: readonly Candidate[], { rounds = 9, roundMs = 200 } = {}): Measurement[] {
  const batches = candidates.map(([, fn]) => calibrate(fn));
  const rates: number[][] = candidates.map(() => []);
  for (let round = 0; round < rounds; round++) {
    candidates.forEach(([, fn], index) => {
      rates[index]?.push(timeRound(fn, batches[index] as number, roundMs));
    });
  }
  return candidates.map(([name], index) => ({ name, opsPerSecond: median(rates[index] as number[]) }));
}

/** Grows the batch until one batch takes ~10 ms, so timer overhead is negligible (and warms the JIT). */
function calibrate(fn: () => unknown): number {
  for (let batch = 1; ; batch *= 2) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    if (Number(process.hrtime.bigint() - start) > 10e6) return batch;
  }
}

function timeRound(fn: () => unknown, batch: number, roundMs: number): number {
  let ops = 0;
  let elapsed = 0;
  const start = process.hrtime.bigint();
  while (elapsed < roundMs * 1e6) {
    for (let i = 0; i < batch; i++) fn();
    ops += batch;
    elapsed = Number(process.hrtime.bigint() - start);
  }
  return (ops / elapsed) * 1e9;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Prints the first measurement (ours) beside the baselines with the ratio ours/baseline. */
export function printComparison(title: string, [ours, ...baselines]: readonly Measurement[]): void {
  if (!ours) return;
  console.log(`\n${title}`);
  const width = Math.max(ours.name.length, ...baselines.map((row) => row.name.length));
  const line = (row: Measurement, ratio: string) =>
    console.log(
      `  ${row.name.padEnd(width)}  ${Math.round(row.opsPerSecond).toLocaleString("en-US").padStart(12)} ops/s${ratio}${row.note ? `   (${row.note})` : ""}`,
    );
  line(ours, "");
  for (const row of baselines)
    line(row, `   ours/this = ${(ours.opsPerSecond / row.opsPerSecond).toFixed(2)}×`);
}

/** A new, empty PostgreSQL database for one run; dropped by the returned function. */
export async function newPostgresDatabase(
  url: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
