/**
 * `looplm check` as a user runs it (in-process, at small shapes) on the two CPU backends: every
 * case of the shared tables runs and passes (op cases, golden cases, a training run per
 * backbone), the speed figures come with the peak they are a percentage of, report.json and
 * report.md are written; a budget the correctness cases overrun drops every speed case and no correctness case, and
 * says which; a CPU emulation is refused without --allow-emulation. The webgpu backend's check
 * runs from the offline bundle (tools/bundle/bundle.test.ts), its op cases in op-cases.test.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODEL_CASES } from "@loop/looped/internal";
import { gpuSuiteRuns, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { startBackend } from "../backend.js";
import { run } from "../cli/run-in-process.test-util.js";
import { spawnCli, untilOutput } from "../cli/spawn-cli.test-util.js";
import { BACKBONES } from "./backbones.js";
import { droppedSummary } from "./budget.js";
import { findGoldenDir, goldenCases } from "./golden-check.js";
import { opCases } from "./op-cases.js";
import type { CheckReport } from "./report.js";
import { runCheck } from "./run-check.js";

const root = mkdtempSync(join(tmpdir(), "looplm-check-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const nativeStarts = await startBackend("native").then(
  (b) => {
    b.stop();
    return { ok: true as const };
  },
  (e: Error) => ({ ok: false as const, error: e.message }),
);
const runs = {
  portable: true,
  native: nativeSuiteRuns("looplm check --backend native", nativeStarts),
};

const readReport = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as CheckReport;

describe("looplm check on the CPU backends", () => {
  for (const backend of ["portable", "native"] as const)
    it.runIf(runs[backend])(
      `--backend ${backend} --size small: every case passes, figures measured`,
      async () => {
        const out = join(root, backend);
        const r = await run("check", "--backend", backend, "--size", "small", "--out", out);
        const report = readReport(out);
        const golden = goldenCases(findGoldenDir()!);
        expect(report.backend).toBe(backend);
        expect(report.complete).toBe(true);
        expect(report.cases.map((c) => c.name)).toEqual([
          ...opCases(1).map((c) => c.name),
          ...Object.keys(MODEL_CASES).map((m) => `model ${m}`),
          ...golden.map((g) => `golden ${g}`),
          ...golden.map((g) => `decode ${g}`),
          ...Object.keys(BACKBONES).map((b) => `training ${b}, 3 steps, fp32`),
        ]);
        expect(report.cases.filter((c) => !c.ok)).toEqual([]);
        expect(report.failed).toBe(0);
        for (const c of report.cases) expect(c.worst!.ratio).toBeLessThanOrEqual(1);
        const names = report.figures.map((f) => f.name);
        expect(names).toContain("fp32 peak");
        expect(names).toContain("GEMM 256×128×128 % of peak");
        expect(names.some((n) => n.startsWith("training step small hybrid"))).toBe(true);
        expect(names.some((n) => n.startsWith("decode "))).toBe(true);
        expect(report.dropped).toEqual([]);
        expect(report.budgetLeftS).toBeNull();
        expect(report.adapter).toBeNull();
        // case time apart from the whole check's; the load beside every speed figure
        const { startS, correctnessS, speedS } = report.phases;
        expect(startS + correctnessS + speedS).toBeCloseTo(report.seconds, 1);
        expect(correctnessS).toBeGreaterThan(0);
        expect(speedS).toBeGreaterThan(0);
        expect(report.machine.load).toHaveLength(3);
        for (const f of report.figures) expect(f.load).toBeGreaterThanOrEqual(0);
        const md = readFileSync(join(out, "report.md"), "utf8");
        expect(md).toContain(`# looplm check --backend ${backend}: PASS`);
        expect(md).toContain("| linear 5×7·3ᵀ: tails in every dimension | linear | pass |");
        expect(r.out).toContain(
          `${report.passed}/${report.passed} correctness cases passed in ${correctnessS.toFixed(1)} s; speed ${speedS.toFixed(1)} s; whole check ${report.seconds.toFixed(0)} s`,
        );
        expect(r.out).toContain(`speed on ${report.machine.cpu} (`);
        expect(md).toContain(`correctness cases passed in ${correctnessS.toFixed(1)} s`);
        expect(md).toMatch(/\| figure \| value \| unit \| load \| note \|/);
        // the progress line, one per case off a terminal
        expect(r.err).toContain(
          `correctness ${report.cases.length}/${report.cases.length}: training transformer`,
        );
      },
    );

  it("a budget already spent by the correctness cases drops every speed case, never a correctness one, and says so with its estimates", async () => {
    const out = join(root, "budget");
    // (no --backend: every command's default, native where it builds)
    const r = await run(
      "check",
      "--size",
      "small",
      "--budget",
      // (spent before the correctness cases end, whatever the machine's speed)
      "0.01s",
      "--out",
      out,
    );
    const report = readReport(out);
    expect(report.backend).toBe(nativeStarts.ok ? "native" : "portable");
    expect(report.failed).toBe(0);
    expect(report.cases.length).toBe(
      opCases(1).length +
        Object.keys(MODEL_CASES).length +
        2 * goldenCases(findGoldenDir()!).length +
        3,
    );
    expect(report.figures.map((f) => f.name)).toEqual(["fp32 peak"]);
    expect(report.dropped.length).toBeGreaterThanOrEqual(5);
    expect(report.budgetLeftS).toBe(0);
    for (const d of report.dropped) expect(d.estimateS).toBeGreaterThan(0);
    const summary = droppedSummary(report.dropped, report.budgetLeftS, report.budgetS);
    expect(summary).toMatch(
      /^\d+ speed case\(s\) estimated at ~.+ \(--budget \d+m would run them\): /,
    );
    expect(r.out).toContain(`dropped for the budget: ${summary}\n`);
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain("Dropped for the budget");
  });

  /** The report of a check ended (as a killed process is) when its progress line starts so. */
  async function cutAt(folder: string, line: string) {
    const out = join(root, folder);
    const cut = runCheck({
      backend: "portable",
      budgetS: 480,
      out,
      allowEmulation: false,
      gpuFeatures: [],
      size: "small",
      progress: (l) => {
        if (l.startsWith(line)) throw new Error("killed");
      },
    });
    await expect(cut).rejects.toThrow("killed");
    return { out, report: readReport(out) };
  }

  it("a check cut short in its speed section leaves the reports of what it found", async () => {
    // (the process ending while the second speed case starts)
    const { out, report } = await cutAt("cut", "speed 2/");
    expect(report.complete).toBe(false);
    expect(report.failed).toBe(0);
    expect(report.figures.length).toBeGreaterThanOrEqual(2); // the peak and the first case's
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain(
      "PASS (incomplete: the check was cut short)",
    );
  });

  it("a check cut short at its first correctness case leaves a report of that case", async () => {
    // (the process ending as the second case starts)
    const { out, report } = await cutAt("cut-first", "correctness 1/");
    expect(report.complete).toBe(false);
    expect(report.cases.map((c) => c.name)).toEqual([opCases(1)[0]!.name]);
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain("incomplete");
  });

  it("SIGTERM during the correctness cases ends the check with one line and the report so far", {
    timeout: 120_000,
  }, async () => {
    const out = join(root, "signalled");
    const child = spawnCli(["check", "--backend", "portable", "--size", "small", "--out", out]);
    let err = "";
    child.stderr!.on("data", (c) => (err += c));
    child.stdout!.resume();
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      await untilOutput(child, /correctness 2\//);
      child.kill("SIGTERM");
      expect(await exited).toBe(143);
    } finally {
      child.kill("SIGKILL");
    }
    expect(err).toContain(
      `looplm: check stopped by SIGTERM: the report of the cases done so far is in ${join(out, "report.md")}; run it again to check every case`,
    );
    const report = readReport(out);
    expect(report.complete).toBe(false);
    expect(report.cases.length).toBeGreaterThanOrEqual(2);
  });

  it("refuses an empty or missing --golden folder and a read-only --out before any case", async () => {
    const empty = mkdtempSync(join(root, "golden-"));
    await expect(
      run("check", "--backend", "portable", "--golden", empty, "--out", join(root, "g")),
    ).rejects.toThrow(
      `--golden ${empty} holds no golden case (no folder with a config.json): name the golden cases' folder (testdata/golden of a checkout)`,
    );
    await expect(
      run(
        "check",
        "--backend",
        "portable",
        "--golden",
        join(empty, "nope"),
        "--out",
        join(root, "g"),
      ),
    ).rejects.toThrow(`--golden ${join(empty, "nope")} is missing: name the golden cases' folder`);
    // (a report's name taken by a folder: refused before any case, as a read-only --out is —
    // tests run as root here, where a read-only mode is not enforced)
    const taken = mkdtempSync(join(root, "taken-"));
    mkdirSync(join(taken, "report.json"));
    await expect(
      run("check", "--backend", "portable", "--out", taken, "--budget", "1s"),
    ).rejects.toThrow(
      `--out: cannot write ${join(taken, "report.json")}: it is a folder, not a file`,
    );
    expect(readdirSync(taken)).toEqual(["report.json"]);
  });

  it("refuses a bad --budget and --gpu-features in one sentence", async () => {
    await expect(run("check", "--budget", "soon")).rejects.toThrow(
      '--budget: expected a duration such as 8m, 90s or 1h, got "soon"',
    );
    await expect(run("check", "--budget", "0s")).rejects.toThrow(
      "--budget 0s leaves no time: the correctness cases always run whole; give a duration above zero such as 8m, 90s or 1h",
    );
    await expect(
      run("check", "--backend", "portable", "--gpu-features", "warp", "--out", join(root, "x")),
    ).rejects.toThrow('--gpu-features: unknown feature "warp"');
  });
});

// SwiftShader through VK_ICD_FILENAMES (vitest.config.ts) is what this machine has
const gpuStarts = await startBackend("webgpu").then(
  (b) => {
    b.stop();
    return { ok: true as const };
  },
  (e: Error) => ({ ok: false as const, error: e.message }),
);

describe.runIf(gpuSuiteRuns("looplm check refuses an emulated GPU", gpuStarts))(
  "an emulated GPU",
  () => {
    it("is refused without --allow-emulation, named as an emulation", async () => {
      await expect(
        run("check", "--backend", "webgpu", "--size", "small", "--out", join(root, "refused")),
      ).rejects.toThrow(
        /the adapter of --backend webgpu is a CPU emulation, not a GPU \(.*SwiftShader.*\).*--allow-emulation/,
      );
    });
  },
);

describe("looplm check --out", () => {
  it("a path that cannot be a folder fails at once with one line naming why", async () => {
    // (/proc/x: a recursive mkdirSync spins forever there in Node 20)
    await expect(run("check", "--backend", "portable", "--out", "/proc/x")).rejects.toThrow(
      /^--out: cannot create folder \/proc\/x: \/proc does not accept new folders$/,
    );
    const taken = join(root, "taken");
    writeFileSync(taken, "");
    await expect(run("check", "--backend", "portable", "--out", taken)).rejects.toThrow(
      /exists as a file, not a folder/,
    );
  });
});
