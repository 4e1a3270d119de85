import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

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
  },
});
