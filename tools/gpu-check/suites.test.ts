/** The suites found in this checkout, and --files cutting them down. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { chooseSuites, findSuites, SUITE_NAMES } from "./suites.js";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
const suites = findSuites(ROOT);

describe("gpu-check suites", () => {
  it("every suite has test files that exist, and no file is in two suites", () => {
    expect(suites.map((s) => s.name)).toEqual(
      SUITE_NAMES.filter((n) => suites.some((s) => s.name === n)),
    );
    for (const name of ["ops", "model", "training", "golden"])
      expect(suites.find((s) => s.name === name)?.files.length, name).toBeGreaterThan(0);
    const all = suites.flatMap((s) => s.files);
    expect(new Set(all).size).toBe(all.length);
    for (const f of all) expect(existsSync(join(ROOT, f)), f).toBe(true);
    // the ops suite holds the GEMM's test, training a trainer's; nothing of gpu-check itself
    expect(suites.find((s) => s.name === "ops")!.files).toContain(
      "packages/webgpu/src/ops/matmul.test.ts",
    );
    expect(suites.find((s) => s.name === "ops")!.files).toContain(
      "packages/ssm-kernels/src/webgpu/ssd-scan-chunked.test.ts",
    );
    expect(suites.find((s) => s.name === "training")!.files).toEqual([
      "packages/looplm/src/gpu-training.test.ts",
    ]);
    expect(all.some((f) => f.startsWith("tools/gpu-check/"))).toBe(false);
    expect(suites.find((s) => s.name === "golden")!.testNamePattern).toBe("webgpu");
  });

  it("--files keeps only those files, and names one that is in no chosen suite", () => {
    const file = "packages/webgpu/src/ops/matmul.test.ts";
    expect(chooseSuites(suites, ["ops", "golden"], [file]).map((s) => [s.name, s.files])).toEqual([
      ["ops", [file]],
    ]);
    expect(() => chooseSuites(suites, ["golden"], [file])).toThrow(
      `--files: ${file} is not a test file of the suites chosen (golden)`,
    );
    expect(chooseSuites(suites, ["model"], null)).toEqual([suites.find((s) => s.name === "model")]);
  });
});
