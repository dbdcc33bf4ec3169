/*
 * `looplm check` end to end: start the backend (refusing an emulated GPU unless allowed), run
 * every correctness case (op cases fp32 and, where the backend offers them, its reduced GEMM
 * precisions: webgpu's mixed, cuda's tf32 and bf16; the
 * golden cases through forward, and decoded token by token with the state on the backend; a
 * short training run per backbone), then the speed cases the
 * budget leaves room for, and write report.json and report.md. Correctness is never dropped.
 */
import { join } from "node:path";
import { MODEL_CASES } from "@loop/looped/internal";
import type { Precision } from "@loop/tensor";
import { checkWritableFile, makeDirectory, outputKind, writeFileAtomic } from "@loop/tensor/node";
import type { GpuFeature } from "@loop/webgpu/node";
import pkg from "../../package.json" with { type: "json" };
import {
  type Backend,
  backendMemory,
  type ComputeBackend,
  checkPrecision,
  startBackend,
} from "../backend.js";
import { startBackendModule } from "../backend-module.js";
import { asCliError, CliError } from "../cli/errors.js";
import { BACKBONES } from "./backbones.js";
import { SpeedPlanner } from "./budget.js";
import { checkGoldenDecode } from "./decode-golden-check.js";
import { checkGoldenCase, findGoldenDir, goldenCases } from "./golden-check.js";
import { checkModelCase } from "./model-check.js";
import { type AnyOps, opCases, REDUCED_PRECISION_TOL } from "./op-cases.js";
import { type CaseResult, checkOpCase, oracleOps } from "./op-conformance.js";
import {
  type CheckReport,
  loadAverage,
  nvidiaDriver,
  readMachine,
  renderMarkdown,
} from "./report.js";
import { type Figure, measurePeak, speedCases } from "./speed.js";
import { checkTraining } from "./training-check.js";

/** What `looplm check` was asked. */
export interface CheckOptions {
  /** The backend; undefined: native where it builds, else portable (every command's default). */
  backend: Backend | undefined;
  /** A backend module's file instead (`--backend-module`, backend-module.ts). */
  backendModule?: string;
  /** Seconds the whole check may take. */
  budgetS: number;
  out: string;
  allowEmulation: boolean;
  gpuFeatures: GpuFeature[];
  /** "small": CI's shapes; "full": a GPU node's (larger op shapes, the benchmark models). */
  size: "small" | "full";
  /** Check fp32 and this precision only (default: every precision the backend offers). */
  precision?: Precision;
  /** The golden cases' folder (default: found by findGoldenDir). */
  golden?: string;
  /** Hears the progress line. */
  progress?: (line: string) => void;
  commit?: string | null;
  /** Hears the one line saying the default backend fell back to portable. */
  notice?: (line: string) => void;
}

/** Steps of each training run. */
const TRAIN_STEPS = { small: 3, full: 12 } as const;

/**
 * The backbones trained in mixed precision too: all on a GPU node; at the small size (an
 * emulated GPU, where each run takes tens of seconds) the one whose GEMMs dominate.
 */
const MIXED_BACKBONES = { small: ["mamba"], full: ["mamba", "hybrid", "transformer"] } as const;

async function start(o: CheckOptions): Promise<ComputeBackend> {
  // (a backend starts at fp32; its other precisions come after, through opsAt)
  if (o.backendModule !== undefined)
    return startBackendModule(o.backendModule, {
      gpuFeatures: o.gpuFeatures,
      allowEmulation: o.allowEmulation,
    });
  const b = await startBackend(o.backend, o.notice, {
    gpuFeatures: o.gpuFeatures,
    allowEmulation: o.allowEmulation,
  }).catch((e: unknown) => {
    // (a device backend missing here: say what checks this machine instead)
    if (o.backend === undefined || backendMemory(o.backend) !== "device") throw e;
    throw new CliError(
      `${(e as Error).message}; \`looplm check --backend native\` checks this machine's CPU kernels instead`,
    );
  });
  if (b.adapter?.emulated && !o.allowEmulation) {
    b.stop();
    throw new CliError(
      `the adapter of --backend ${b.name} is a CPU emulation, not a GPU (${b.adapter.name}): no GPU driver was found; ${b.driver ?? ""} (--allow-emulation checks the emulation anyway)`,
    );
  }
  return b;
}

/** Run the check; resolves to its report (also written to `o.out`). */
export async function runCheck(o: CheckOptions): Promise<CheckReport> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const deadline = t0 / 1000 + o.budgetS;
  const say = o.progress ?? (() => {});
  // (makeDirectory, not a recursive mkdirSync: that spins forever on /proc/x in Node 20)
  // (and the reports' names probed: a read-only --out fails now, not after the whole check)
  try {
    makeDirectory(o.out);
    checkWritableFile(join(o.out, "report.json"));
    checkWritableFile(join(o.out, "report.md"));
  } catch (e) {
    throw new CliError(`--out: ${(e as Error).message}`);
  }
  const goldenDir = o.golden ?? findGoldenDir();
  if (!goldenDir)
    throw new CliError(
      "no golden cases found: pass --golden <dir> (testdata/golden of a checkout)",
    );
  // (a golden folder with no case would pass the check without running one)
  const named = o.golden !== undefined ? `--golden ${o.golden}` : `the golden folder ${goldenDir}`;
  const kind = asCliError(() => outputKind(goldenDir));
  if (kind !== "folder")
    throw new CliError(
      `${named} is ${kind === "missing" ? "missing" : `a ${kind}, not a folder`}: name the golden cases' folder (testdata/golden of a checkout)`,
    );
  if (asCliError(() => goldenCases(goldenDir)).length === 0)
    throw new CliError(
      `${named} holds no golden case (no folder with a config.json): name the golden cases' folder (testdata/golden of a checkout)`,
    );
  const b = await start(o);
  if (o.precision !== undefined)
    try {
      checkPrecision(b, o.precision);
    } catch (e) {
      b.stop();
      throw e;
    }
  const started = performance.now();
  // (set when the correctness cases end)
  let correct: number | null = null;
  const cases: CaseResult[] = [];
  const figures: Figure[] = [];
  let planner: SpeedPlanner | null = null;
  // every precision it offers below fp32, each checked on the GEMM-bearing cases; mixed (f16
  // operands, loss-scaled training) on training runs too
  const reduced = b.caps.precisions.filter(
    (p) => p !== "fp32" && (o.precision === undefined || p === o.precision),
  ) as Exclude<Precision, "fp32">[];
  const mixed = reduced.includes("mixed");
  const snapshot = (complete: boolean): CheckReport => {
    const passed = cases.filter((c) => c.ok).length;
    const now = performance.now();
    return {
      complete,
      looplm: pkg.version,
      commit: o.commit ?? null,
      startedAt,
      seconds: (now - t0) / 1000,
      phases: {
        startS: (started - t0) / 1000,
        correctnessS: ((correct ?? now) - started) / 1000,
        speedS: correct === null ? 0 : (now - correct) / 1000,
      },
      backend: b.name,
      ...(o.backendModule !== undefined ? { module: o.backendModule } : {}),
      size: o.size,
      budgetS: o.budgetS,
      machine: readMachine(),
      driver: {
        vulkan: b.driver ?? null,
        nvidia: nvidiaDriver(),
        ...(b.libraries ? { cuda: b.libraries } : {}),
      },
      adapter: b.adapter ? { ...b.adapter, requested: o.gpuFeatures } : null,
      precisions: ["fp32", ...reduced],
      cases,
      figures,
      dropped: planner?.dropped ?? [],
      budgetLeftS: planner?.leftS ?? null,
      passed,
      failed: cases.length - passed,
    };
  };
  /** Both reports, written atomically: after every correctness and speed case, so that a check
   * cut short (a signal, a node's allocation ending) still leaves what it found. */
  const write = (r: CheckReport) => {
    writeFileAtomic(join(o.out, "report.json"), `${JSON.stringify(r, null, 2)}\n`);
    writeFileAtomic(join(o.out, "report.md"), renderMarkdown(r));
  };
  try {
    const oracle = oracleOps();
    const ops = b.ops as AnyOps;
    const scale = o.size === "small" ? 1 : 4;
    const ops1 = opCases(scale);
    const golden = goldenCases(goldenDir);
    const backbones = Object.keys(BACKBONES) as (keyof typeof BACKBONES)[];
    const gemmCases = ops1.filter((c) => c.precision === "any");
    const mixedTrained: readonly string[] = mixed ? MIXED_BACKBONES[o.size] : [];
    const models = Object.keys(MODEL_CASES) as (keyof typeof MODEL_CASES)[];
    const total =
      ops1.length +
      reduced.length * gemmCases.length +
      models.length +
      2 * golden.length +
      backbones.length +
      mixedTrained.length;
    const done = async (r: CaseResult) => {
      cases.push(r);
      // the report after every case: a check interrupted or cut short leaves what it found
      write(snapshot(false));
      const failed = cases.filter((c) => !c.ok).length;
      say(
        `correctness ${cases.length}/${total}${failed ? ` (${failed} FAILED)` : ""}: ${r.name} ${r.ok ? "ok" : "FAIL"} · ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
      // (the event loop turns between two cases: a SIGINT/SIGTERM is heard there, the report of
      // every case so far already written)
      await new Promise<void>((res) => setImmediate(res));
    };
    for (const [i, c] of ops1.entries()) await done(await checkOpCase(ops, oracle, c, 100 + i));
    for (const p of reduced) {
      const opsP = b.opsAt(p) as AnyOps;
      try {
        for (const [i, c] of gemmCases.entries()) {
          const r = await checkOpCase(opsP, oracle, c, 200 + i, REDUCED_PRECISION_TOL[p]);
          await done({ ...r, name: `${r.name} (${p})` });
        }
      } finally {
        // (back to fp32: a device that switches precision keeps the last one asked)
        b.opsAt("fp32");
      }
    }
    for (const name of models) await done(await checkModelCase(b, name));
    for (const name of golden) await done(await checkGoldenCase(goldenDir, name, b));
    for (const name of golden) await done(await checkGoldenDecode(goldenDir, name, b));
    for (const bb of backbones) {
      await done(await checkTraining(b, bb, TRAIN_STEPS[o.size]));
      if (mixedTrained.includes(bb))
        await done(await checkTraining(b, bb, TRAIN_STEPS[o.size], "mixed"));
    }
    correct = performance.now();

    write(snapshot(false));
    // speed: the peak first (what the percentages divide by), then the cheapest cases first
    say(`speed: measuring the fp32 peak · ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const peak = { ...(await measurePeak(b)), load: loadAverage()[0] };
    figures.push(peak);
    // the native CPU kernels to compare a device's training step with (the device backends start them)
    const native = b.caps.memory === "device" && b.kernels.sets.size > 0 ? b.kernels : null;
    const list = speedCases(b, o.size, () => peak.value, native);
    // before anything is measured, assume 2% of the peak (small shapes reach less)
    // (no peak measured, cuda: assume 1 TFLOP/s, far below any sm_80 GPU's)
    const assumed = Number.isFinite(peak.value) ? Math.max(peak.value, 1e-3) : 1000;
    planner = new SpeedPlanner(deadline, assumed * 1e9 * 0.02);
    for (const [i, c] of list.entries()) {
      if (!planner.admit(c.name, c.flops)) continue;
      say(
        `speed ${i + 1}/${list.length}: ${c.name} · ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
      const ts = performance.now();
      try {
        const load = loadAverage()[0];
        figures.push(...(await c.run()).map((f) => ({ ...f, load })));
      } catch (e) {
        figures.push({
          name: c.name,
          value: Number.NaN,
          unit: "",
          note: `failed: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`,
          load: loadAverage()[0],
        });
      }
      planner.measured(c.flops, (performance.now() - ts) / 1000);
      write(snapshot(false));
      await new Promise<void>((res) => setImmediate(res));
    }
    const report = snapshot(true);
    write(report);
    return report;
  } finally {
    b.stop();
  }
}
