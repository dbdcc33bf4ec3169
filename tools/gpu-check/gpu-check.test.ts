/**
 * `pnpm gpu-check` end to end on SwiftShader, as CI runs it: with --allow-emulation it finds the
 * adapter, runs one suite (vitest as a child) and one benchmark, and writes report.md and
 * report.json that say so; without it, the emulation is refused in one line and the report says
 * why. One test file of one suite and one benchmark keep it to about a minute on 2 cores (the whole check on
 * SwiftShader takes tens of minutes there; every GPU suite already runs in `pnpm test`).
 * Skipped with one printed line where SwiftShader is not installed (a failure under CI).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { suiteRuns } from "../test-support/suite-runs.js";
import type { Report } from "./report.js";
import { findSuites } from "./suites.js";
import { SWIFTSHADER_ICD } from "./system-probe.js";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
const runs = suiteRuns(
  "pnpm gpu-check end to end",
  existsSync(SWIFTSHADER_ICD)
    ? null
    : `no SwiftShader (${SWIFTSHADER_ICD}: Debian's chromium package)`,
  "installs chromium",
);

/**
 * The end-to-end run takes the ops suite cut down to one file that opens a device: RoPE's (well
 * under a second of GPU work on SwiftShader), or while that is missing the smallest such file
 * (found, so that a renamed file does not break the test) — and the attention benchmark (one
 * small shape on an emulation).
 */
const SUITE = "ops";
const ROPE = "packages/webgpu/src/ops/rope.test.ts";
const opsFiles = findSuites(ROOT)
  .find((s) => s.name === SUITE)!
  .files.filter((f) => readFileSync(join(ROOT, f), "utf8").includes("gpuForTests("));
const FILE = opsFiles.includes(ROPE)
  ? ROPE
  : opsFiles.sort((a, b) => statSync(join(ROOT, a)).size - statSync(join(ROOT, b)).size)[0]!;
const BENCH = "attention";

/** What the command printed, less pnpm's own "[ELIFECYCLE] Command failed" line. */
function gpuCheck(args: string[]): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(__)?VITEST/.test(k)) env[k] = v;
  env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  const r = spawnSync("pnpm", ["--silent", "gpu-check", ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: 600_000,
  });
  const output = `${r.stdout}${r.stderr}`
    .split("\n")
    .filter((l) => !l.startsWith("[ELIFECYCLE]"))
    .join("\n");
  return { status: r.status, output };
}

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "gpu-check-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(runs)("pnpm gpu-check on SwiftShader", () => {
  it("--allow-emulation: a suite and a benchmark run, one report says so", {
    timeout: 600_000,
  }, () => {
    const out = join(tmp(), "report");
    const r = gpuCheck([
      "--allow-emulation",
      "--quick",
      "--suites",
      SUITE,
      "--files",
      FILE,
      "--bench",
      BENCH,
      "--out",
      out,
    ]);
    expect(r.output).toMatch(/gpu-check: passed in [\d.]+ s/);
    expect(r.status).toBe(0);
    // the two report files, and no temporary file left behind
    expect(readdirSync(out).filter((f) => f.startsWith("report"))).toEqual([
      "report.json",
      "report.md",
    ]);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
    expect(report.ok).toBe(true);
    expect(report.verdict).toBe("emulation");
    expect(report.adapter?.name).toMatch(/swiftshader/i);
    expect(report.adapter?.emulated).toBe(true);
    expect(report.adapter?.limits.maxComputeWorkgroupStorageSize).toBeGreaterThan(0);
    expect(report.suites.map((s) => [s.name, s.files, s.ok, s.failed, s.skipped])).toEqual([
      [SUITE, 1, true, 0, 0],
    ]);
    expect(report.suites[0]!.passed).toBeGreaterThan(0);
    const bench = report.bench!;
    expect(bench.ok).toBe(true);
    // (the emulator's FMA-loop figure, printed to whole GFLOP/s, may read 0 on a loaded machine)
    expect(bench.gpuPeak?.source).toMatch(/^measured: WGSL FMA loop/);
    expect(Number.isFinite(bench.gpuPeak?.gflops)).toBe(true);
    const table = bench.tables.find((t) => t.bench === BENCH)!;
    expect(table.rows.length).toBeGreaterThan(0);
    expect(table.columns).toContain("webgpu ms");
    expect(bench.ratios.filter((x) => x.bench === BENCH).length).toBe(table.rows.length);
    expect(report.phases.map((p) => p.name)).toEqual([
      "adapters",
      "correctness suites",
      "benchmarks",
    ]);
    expect(report.cpu.cores).toBeGreaterThan(0);
    const md = readFileSync(join(out, "report.md"), "utf8");
    expect(md).toMatch(/^# GPU check: passed/);
    expect(md).toContain(`| ${SUITE} |`);
    expect(md).toContain(`### ${BENCH}`);
  });

  it("without --allow-emulation: refused in one line, exit 1, the report says why", {
    timeout: 120_000,
  }, () => {
    const out = join(tmp(), "refused");
    const r = gpuCheck(["--out", out]);
    expect(r.status).toBe(1);
    const refusal = r.output.split("\n").filter((l) => l.includes("refused:"));
    expect(refusal).toHaveLength(1);
    expect(refusal[0]).toMatch(/is a CPU emulation of a GPU.*pass --allow-emulation/);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
    expect(report.ok).toBe(false);
    expect(report.verdict).toBe("refused");
    expect(report.suites).toEqual([]);
    expect(report.bench).toBeNull();
  });

  it("a bad option: one line naming it, exit 1, no stack trace", () => {
    const r = gpuCheck(["--bench", "matmul,gemm"]);
    expect(r.status).toBe(1);
    expect(r.output.trim()).toBe(
      "error: option '--bench <names>' argument 'matmul,gemm' is invalid. unknown gemm; expected a comma-separated list of matmul, ssd, attention, model, or none",
    );
    const f = gpuCheck(["--suites", "golden", "--files", "nowhere.test.ts"]);
    expect(f.status).toBe(1);
    expect(f.output.trim()).toBe(
      "gpu-check: --files: nowhere.test.ts is not a test file of the suites chosen (golden)",
    );
  });
});
