import { benchDelivery } from "./delivery.js";
import { benchWebhooks } from "./webhooks.js";

// `npm run bench` runs every benchmark; `npm run bench -- webhooks` runs one.
const benchmarks: Record<string, () => void | Promise<void>> = {
  webhooks: benchWebhooks,
  delivery: benchDelivery,
  serve: async () => (await import("./serve.js")).benchServe(),
  holder: async () => (await import("./holder.js")).benchHolder(),
  "holder-matching": async () => (await import("./holder-matching.js")).benchHolderMatching(),
  push: async () => (await import("./push.js")).benchPush(),
  events: async () => (await import("./events.js")).benchEvents(),
  "events-cluster": async () => (await import("./events-cluster.js")).benchEventsCluster(),
  agreements: async () => (await import("./agreements.js")).benchAgreements(),
  "search-stall": async () => (await import("./search-stall.js")).benchSearchStall(),
  "catalogue-memory": async () => (await import("./catalogue-memory.js")).benchCatalogueMemory(),
  "sqlite-commits": async () => (await import("./sqlite-commits.js")).benchSqliteCommits(),
  "pg-statements": async () => (await import("./pg-statements.js")).benchPgStatements(),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; known: ${Object.keys(benchmarks).join(", ")}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(benchmarks)) {
  console.log(`\n=== ${name} ===`);
  await benchmarks[name]?.();
}
