/**
 * `--precision fp32|tf32|bf16|mixed` on every command that runs a model (train, eval, generate,
 * forward; check checks fp32 and the one named): a bad value is named; one the backend lacks (mixed or bf16 on a CPU backend) is
 * refused in one line naming what it offers, before anything is read or made; fp32, the
 * default, records no precision in run.json (a record without one is fp32). Mixed training
 * itself is tested on the GPU (gpu-mixed-training.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "./program.js";
import { runQuiet, TINY_TRAIN } from "./tiny-args.test-util.js";

afterEach(() => vi.restoreAllMocks());

const run = (...args: string[]) => runQuiet(buildProgram, ...args);
const tiny = TINY_TRAIN;

describe("--precision", () => {
  it("names a bad value", async () => {
    await expect(run("train", ...tiny, "--precision", "fp16")).rejects.toThrow(
      '--precision must be one of fp32, tf32, bf16, mixed, got "fp16"',
    );
  });

  it("refuses mixed on a CPU backend, naming the flag, before making the run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-precision-"));
    const out = join(dir, "a");
    await expect(
      run("train", ...tiny, "--backend", "portable", "--precision", "mixed", "--out", out),
    ).rejects.toThrow(
      /^--precision mixed is not offered by --backend portable \(it offers fp32\)$/,
    );
    expect(existsSync(join(out, "log.jsonl"))).toBe(false);
  });

  it("fp32 trains and records no precision", async () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-precision-"));
    await run("train", ...tiny, "--backend", "portable", "--precision", "fp32", "--out", dir);
    const info = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    expect(info.train.precision).toBeUndefined();
  });

  it.each([
    ["eval", "--model", "no-such-model"],
    ["generate", "--model", "no-such-model", "--tokens", "1"],
    ["forward", "--model", "no-such-model", "--input", "no-such.json", "--out", "x.safetensors"],
  ])("%s refuses bf16 on a CPU backend by name, before reading the model", async (...args) => {
    await expect(run(...args, "--backend", "portable", "--precision", "bf16")).rejects.toThrow(
      /^--precision bf16 is not offered by --backend portable \(it offers fp32\)$/,
    );
    await expect(run(...args, "--backend", "portable", "--precision", "fp16")).rejects.toThrow(
      '--precision must be one of fp32, tf32, bf16, mixed, got "fp16"',
    );
  });

  it("check refuses a precision the backend lacks by name, before writing a report", async () => {
    const out = mkdtempSync(join(tmpdir(), "looplm-precision-check-"));
    await expect(
      run("check", "--backend", "portable", "--precision", "mixed", "--out", out),
    ).rejects.toThrow(
      /^--precision mixed is not offered by --backend portable \(it offers fp32\)$/,
    );
    expect(existsSync(join(out, "report.json"))).toBe(false);
  });
});
