/**
 * `--backend portable|native` through the real binary: every compute command takes it, a bad
 * value or a named backend that cannot start is one line and a non-zero exit (never a silent
 * fall-back), runs record the backend and `train --resume` keeps the one it was started with.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenPath, nativeSuiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { disableNativeKernels, enableNativeKernels } from "../native.js";
import { buildProgram } from "./program.js";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
/** Run the real binary (from source) with `args`, `env` added to this process's environment. */
const looplm = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ["--import", "tsx", "--conditions=@loop/source", main, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
const messages = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("looplm:"));

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-backend-"));
const train = [
  ...["train", "--task", "phop", "--alphabet", "3", "--length", "12", "--hops", "2"],
  ...["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8", "--steps", "2"],
  ...["--batch", "4", "--eval-every", "0", "--eval-count", "8", "--warmup", "1"],
];
const golden = goldenPath("mamba-1x1");
/** `looplm forward`'s flags for one golden case (after the command and its --backend). */
const forward = (out: string) => [
  "--model",
  golden,
  "--input",
  join(golden, "inputs.json"),
  "--out",
  out,
];
const runJson = (dir: string) => JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));

const native = await enableNativeKernels();
disableNativeKernels();
const nativeBuilds = nativeSuiteRuns("--backend native runs", {
  ok: native.enabled,
  error: native.reason ?? "",
} as { ok: true } | { ok: false; error: string });

describe("--backend", () => {
  it("is an option of every command that computes, listing the choices in --help", () => {
    const program = buildProgram();
    const compute = [
      ...["train", "eval", "sweep", "experiment", "reproduce", "generate", "forward", "worker"],
      "check", // (the backend it checks)
      "worker-job", // (hidden: a worker's training process, given the job's backend)
    ];
    for (const c of program.commands) {
      const opt = c.options.find((o) => o.long === "--backend");
      if (!compute.includes(c.name())) {
        expect(opt, c.name()).toBeUndefined();
        continue;
      }
      expect(opt, c.name()).toBeDefined();
      expect(c.helpInformation()).toMatch(/--backend <name>\s+compute backend: portable \(/);
      expect(opt!.description).toMatch(/native \(C kernels compiled on this machine/);
      expect(opt!.description).toMatch(/webgpu \(a GPU through WebGPU/);
    }
  });

  it("refuses an unknown backend in one line", () => {
    const r = looplm(["forward", "--backend", "gpu", ...forward(join(tmp(), "o.safetensors"))]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      'looplm: --backend must be one of portable, native, webgpu, cuda, got "gpu"',
    ]);
  });

  it("fails in one line, before any work, when a named backend cannot start", () => {
    const out = join(tmp(), "o.safetensors");
    const off = looplm(["forward", "--backend", "native", ...forward(out)], { LOOPLM_NATIVE: "0" });
    expect(off.status).toBe(1);
    expect(off.stderr.trim().split("\n")).toEqual([
      "looplm: --backend native cannot start here: native kernels disabled by LOOPLM_NATIVE",
    ]);
    expect(existsSync(out)).toBe(false);
    const dir = tmp();
    const noCc = looplm([...train, "--backend", "native", "--out", join(dir, "run")], {
      CC: "false",
      LOOPLM_NATIVE_CACHE: join(dir, "cache"),
    });
    expect(noCc.status).toBe(1);
    expect(noCc.stderr.trim().split("\n")).toEqual([
      "looplm: --backend native cannot start here: false failed: exit code 1",
    ]);
    const missingCc = looplm(
      ["forward", "--backend", "native", ...forward(join(dir, "o.safetensors"))],
      { CC: join(dir, "no-such-cc"), LOOPLM_NATIVE_CACHE: join(dir, "cache") },
    );
    expect(missingCc.status).toBe(1);
    expect(missingCc.stderr).toBe(
      `looplm: --backend native cannot start here: no C compiler: CC=${join(dir, "no-such-cc")} is not a program on this machine (set CC to gcc or clang)\n`,
    );
    expect(existsSync(join(dir, "run"))).toBe(false);
    // webgpu without an adapter (a Vulkan driver list that names no driver)
    const noGpu = looplm(["forward", "--backend", "webgpu", ...forward(out)], {
      VK_ICD_FILENAMES: join(dir, "none.json"),
      XDG_RUNTIME_DIR: dir,
    });
    expect(noGpu.status).toBe(1);
    const none = join(dir, "none.json");
    // (the reason, then the one line naming the Vulkan driver and loader it tried)
    const noAdapter = `looplm: --backend webgpu cannot start here: webgpu: no GPU adapter was found (VK_ICD_FILENAMES=${none} gave no adapter); Vulkan driver: VK_ICD_FILENAMES=${none} as set; loader `;
    // Dawn's own lines (the Vulkan loader's warnings, a C++ source line) stay out of the output…
    expect(noGpu.stderr.startsWith(noAdapter), noGpu.stderr).toBe(true);
    expect(noGpu.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    // …unless --verbose asks for them
    const verbose = looplm(["forward", "--backend", "webgpu", "--verbose", ...forward(out)], {
      VK_ICD_FILENAMES: join(dir, "none.json"),
      XDG_RUNTIME_DIR: dir,
    });
    expect(verbose.status).toBe(1);
    expect(verbose.stderr.trim().split("\n").at(-1)!.startsWith(noAdapter)).toBe(true);
    expect(verbose.stderr).toMatch(/vkCreateInstance|Vulkan|vulkan/);
  });

  it("--backend cuda without a CUDA driver is one line and exit 1, nothing written", () => {
    const dir = tmp();
    const out = join(dir, "o.safetensors");
    const r = looplm(["forward", "--backend", "cuda", ...forward(out)], {
      LOOPLM_CUDA_DRIVER: join(dir, "libcuda.so.1"),
      LOOPLM_CUDA_CACHE: join(dir, "cache"),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^looplm: --backend cuda cannot start here: (no CUDA driver: ${join(dir, "libcuda.so.1")} could not be opened \\(.+\\)|no CUDA compiler: .+)\n$`,
      ),
    );
    expect(existsSync(out)).toBe(false);
  });

  it("runs portable when asked, without a word about native kernels", () => {
    const dir = tmp();
    const r = looplm([...train, "--backend", "portable", "--out", join(dir, "run")], {
      CC: "false",
      LOOPLM_NATIVE_CACHE: join(dir, "cache"),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(messages(r.stderr)).toEqual([]);
    expect(runJson(join(dir, "run"))).toMatchObject({
      backend: "portable",
      flags: { backend: "portable" },
    });
    const f = looplm(["forward", "--backend", "portable", ...forward(join(dir, "o.safetensors"))]);
    expect(f.status, f.stderr).toBe(0);
    expect(existsSync(join(dir, "o.safetensors"))).toBe(true);
  });

  it.runIf(nativeBuilds)("train --resume keeps the run's backend unless --backend is typed", () => {
    const run = join(tmp(), "run");
    expect(looplm([...train, "--backend", "portable", "--out", run]).status).toBe(0);
    // (the default here would be native: the recorded choice wins)
    const kept = looplm(["train", "--out", run, "--resume", "--steps", "3"]);
    expect(kept.status, kept.stderr).toBe(0);
    expect(runJson(run)).toMatchObject({ backend: "portable", flags: { backend: "portable" } });
    const moved = looplm([
      "train",
      "--out",
      run,
      "--resume",
      "--steps",
      "4",
      "--backend",
      "native",
    ]);
    expect(moved.status, moved.stderr).toBe(0);
    expect(runJson(run)).toMatchObject({ backend: "native", flags: { backend: "native" } });
    const fresh = join(tmp(), "fresh");
    expect(looplm([...train, "--out", fresh]).status).toBe(0);
    expect(runJson(fresh).backend).toBe("native");
    expect(runJson(fresh).flags.backend).toBeUndefined();
  });
});
