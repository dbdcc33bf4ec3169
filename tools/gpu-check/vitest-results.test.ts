/** A suite's counts from vitest's JSON report: skips and unloaded files are not passes. */
import { describe, expect, it } from "vitest";
import { countSuite, suitePassed, type VitestJson } from "./vitest-results.js";

const ROOT = "/repo";
const report: VitestJson = {
  testResults: [
    {
      name: "/repo/packages/webgpu/src/ops/rope.test.ts",
      status: "passed",
      assertionResults: [
        { fullName: "webgpu rope forward", status: "passed" },
        { fullName: "webgpu rope backward", status: "passed" },
      ],
    },
    {
      name: "/repo/packages/webgpu/src/ops/swiglu.test.ts",
      status: "failed",
      assertionResults: [
        { fullName: "webgpu swiglu forward", status: "failed" },
        { fullName: "webgpu swiglu backward", status: "skipped" },
      ],
    },
    {
      name: "/repo/packages/webgpu/src/train/gpu-step-engine.test.ts",
      status: "failed",
      message: "Error: webgpu training: skipped, no WebGPU adapter\n    at …",
      assertionResults: [],
    },
    {
      name: "/repo/packages/looplm/src/forward/golden.test.ts",
      status: "passed",
      assertionResults: [
        { fullName: "looplm forward --backend native: golden cases mamba", status: "skipped" },
        { fullName: "looplm forward --backend webgpu: golden cases mamba", status: "passed" },
      ],
    },
  ],
};

describe("gpu-check: vitest's counts", () => {
  it("counts passed, failed and skipped tests of the suite's files", () => {
    const c = countSuite(report, ROOT, [
      "packages/webgpu/src/ops/rope.test.ts",
      "packages/webgpu/src/ops/swiglu.test.ts",
    ]);
    expect(c).toEqual({
      passed: 2,
      failed: 1,
      skipped: 1,
      failures: ["packages/webgpu/src/ops/swiglu.test.ts › webgpu swiglu forward"],
    });
    expect(suitePassed(c)).toBe(false);
  });

  it("a file that failed to load is a failure, with its first line", () => {
    const c = countSuite(report, ROOT, ["packages/webgpu/src/train/gpu-step-engine.test.ts"]);
    expect(c.failed).toBe(1);
    expect(c.failures).toEqual([
      "packages/webgpu/src/train/gpu-step-engine.test.ts: Error: webgpu training: skipped, no WebGPU adapter",
    ]);
  });

  it("a file missing from the report is a failure", () => {
    const c = countSuite(report, ROOT, [
      "packages/webgpu/src/ops/rope.test.ts",
      "packages/webgpu/src/x.test.ts",
    ]);
    expect(c.failures).toEqual([
      "packages/webgpu/src/x.test.ts: not in vitest's report (did not run)",
    ]);
    expect(suitePassed(c)).toBe(false);
  });

  it("with a test-name pattern only the matching tests count", () => {
    const c = countSuite(report, ROOT, ["packages/looplm/src/forward/golden.test.ts"], "webgpu");
    expect(c).toEqual({ passed: 1, failed: 0, skipped: 0, failures: [] });
    expect(suitePassed(c)).toBe(true);
  });

  it("a skip is not a pass: the GPU suites skip only without an adapter", () => {
    expect(suitePassed({ passed: 3, failed: 0, skipped: 1, failures: [] })).toBe(false);
    expect(suitePassed({ passed: 0, failed: 0, skipped: 0, failures: [] })).toBe(false);
  });
});
