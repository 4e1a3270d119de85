#!/usr/bin/env node
// Runs the built CLI; `npm run build` at the repository root produces dist/.
import { run } from "../dist/main.js";

process.exitCode = await run(process.argv.slice(2));
