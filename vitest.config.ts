import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources of sibling packages, never a stale build.
    conditions: ["@doorbell/source"],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
