// Runs the CLI from its sources in a real process (stdin, stdout, exit code), for tests.
import { run } from "../src/main.js";

process.exitCode = await run(process.argv.slice(2));
