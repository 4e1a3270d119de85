#!/usr/bin/env node
// Runs the built CLI. In a checkout, `npm run build` at the repository root produces dist/.
let main;
try {
  main = await import("../dist/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  process.stderr.write(
    `doorbell: not built yet (${error.message.split("\n")[0]}); run npm run build first\n`,
  );
  process.exit(1);
}
process.exitCode = await main.run(process.argv.slice(2));
