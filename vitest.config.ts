import { existsSync } from "node:fs";
import { defineConfig } from "vitest/config";

// The WebGPU suites run on Google's SwiftShader Vulkan driver (Debian's chromium package ships
// it) unless the caller chose a driver: set here, before the test processes start, because
// changing the environment of a running process races with the driver's threads.
const swiftshader = "/usr/lib/chromium/vk_swiftshader_icd.json";
if (!process.env.VK_ICD_FILENAMES && existsSync(swiftshader))
  process.env.VK_ICD_FILENAMES = swiftshader;

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
