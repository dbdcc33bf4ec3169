import { defineConfig } from "vitest/config";

// Tests run against each package's `src` through the custom "@loop/source" export condition,
// so no build is needed before `vitest run`.
export default defineConfig({
  resolve: { conditions: ["@loop/source"] },
  ssr: { resolve: { conditions: ["@loop/source"], externalConditions: ["@loop/source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "tools/**/*.test.ts", "benchmarks/**/*.test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
