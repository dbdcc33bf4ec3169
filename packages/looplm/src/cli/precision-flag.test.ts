/**
 * `looplm train --precision fp32|mixed`: a bad value is named; mixed on a CPU backend is refused
 * in one line naming the flag (the CPU kernels train in fp32); fp32, the default, records nothing
 * new in run.json (runs read the same as before the flag existed). Mixed training itself is
 * tested on the GPU (gpu-mixed-training.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "./program.js";

afterEach(() => vi.restoreAllMocks());

async function run(...args: string[]): Promise<void> {
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(["node", "looplm", ...args]);
  } finally {
    vi.restoreAllMocks();
  }
}

const tiny = [
  ...["--task", "phop", "--alphabet", "3", "--length", "12", "--hops", "2"],
  ...["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8", "--loops", "2"],
  ...["--batch", "4", "--eval-every", "0", "--eval-count", "8", "--warmup", "0", "--steps", "1"],
];

describe("--precision", () => {
  it("names a bad value", async () => {
    await expect(run("train", ...tiny, "--precision", "fp16")).rejects.toThrow(
      '--precision must be one of fp32, mixed, got "fp16"',
    );
  });

  it("refuses mixed on a CPU backend, naming the flag, before making the run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-precision-"));
    const out = join(dir, "a");
    await expect(
      run("train", ...tiny, "--backend", "portable", "--precision", "mixed", "--out", out),
    ).rejects.toThrow(/^--precision mixed needs --backend webgpu: the CPU backends train in fp32$/);
    expect(existsSync(join(out, "log.jsonl"))).toBe(false);
  });

  it("fp32 trains as before and records no precision", async () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-precision-"));
    await run("train", ...tiny, "--backend", "portable", "--precision", "fp32", "--out", dir);
    const info = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    expect(info.train.precision).toBeUndefined();
  });
});
