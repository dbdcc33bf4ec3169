/*
 * `looplm check [--backend B | --backend-module FILE] [--budget 8m] [--out DIR] [--allow-emulation] [--gpu-features …]
 * [--precision P]`
 * (the backend by default as every command's: native where it builds, else portable):
 * is this backend correct, and how fast is it, on this machine (check/run-check.ts). Prints a
 * live progress line, writes report.md and report.json, exits 0 only when every case passed.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Precision } from "@loop/tensor";
import { parseGpuFeatures } from "@loop/webgpu/node";
import { type Command, Option } from "commander";
import { type Backend, parseBackend } from "../../backend.js";
import { droppedSummary, parseBudget } from "../../check/budget.js";
import { runCheck } from "../../check/run-check.js";
import { BACKEND_OPTION_HELP } from "../compute.js";
import { CliError, choiceOption } from "../errors.js";
import { parsePrecision } from "../options/precision.js";

interface Flags {
  backend?: Backend;
  backendModule?: string;
  budget: number;
  out: string;
  allowEmulation?: boolean;
  gpuFeatures?: string;
  size: "small" | "full";
  golden?: string;
  precision?: Precision;
}

/** The commit checked: LOOPLM_COMMIT (the offline bundle's), else git's where this file is. */
function commit(): string | null {
  if (process.env.LOOPLM_COMMIT) return process.env.LOOPLM_COMMIT;
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: dirname(fileURLToPath(import.meta.url)),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

/** The progress line: rewritten in place on a terminal, one line each otherwise. */
function progressLine(): (line: string) => void {
  const tty = process.stderr.isTTY === true;
  return (line) => {
    if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    else process.stderr.write(`${line}\n`);
  };
}

const asCli =
  <T>(f: (v: string) => T) =>
  (v: string): T => {
    try {
      return f(v);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
  };

/**
 * Run `work` (the check) so that SIGINT/SIGTERM, heard between two cases, ends it at once with
 * one line saying where the report of the cases done so far is (written after every case), and
 * the signal's exit status.
 */
async function whileStoppable<T>(out: string, work: () => Promise<T>): Promise<T> {
  const stop = (sig: "SIGINT" | "SIGTERM") => {
    const report = join(out, "report.md");
    process.stderr.write(
      `\nlooplm: check stopped by ${sig}: ${existsSync(report) ? `the report of the cases done so far is in ${report}` : "no case had finished"}; run it again to check every case\n`,
    );
    process.exit(sig === "SIGINT" ? 130 : 143);
  };
  const onInt = () => stop("SIGINT");
  const onTerm = () => stop("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  try {
    return await work();
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}

export function registerCheck(program: Command): void {
  program
    .command("check")
    .description(
      "Check a backend on this machine: every op of the backend contract (forward and backward) against the CPU oracle, the golden cases, a short training run per backbone, then its speed; writes report.md and report.json; exit 0 only if every case passed",
    )
    .addOption(new Option("--backend <name>", BACKEND_OPTION_HELP).argParser(parseBackend))
    .addOption(
      new Option(
        "--backend-module <file>",
        "check a backend of your own instead: an ES module whose default export starts it (docs/backends.md)",
      ).conflicts("backend"),
    )
    .addOption(
      new Option(
        "--budget <time>",
        "time for the whole check (8m, 90s, 1h): speed cases are dropped, slowest first, to fit; correctness never",
      )
        .argParser(asCli(parseBudget))
        .default(480, "8m"),
    )
    .option("--out <dir>", "folder for report.md and report.json", "runs/check")
    .option(
      "--allow-emulation",
      "accept a CPU emulation of a GPU (SwiftShader, lavapipe) when no GPU driver is found; always named as emulated",
    )
    .option(
      "--gpu-features <list>",
      "unlock GPU features with Dawn's toggles: f16, subgroups, subgroup-matrix (comma-separated)",
    )
    .addOption(
      new Option(
        "--size <size>",
        "shapes: small (seconds on an emulated GPU, as CI runs it) or full (a GPU node's: larger op shapes, the benchmark models)",
      )
        .argParser(choiceOption("--size", ["small", "full"] as const))
        .default("full"),
    )
    .option(
      "--golden <dir>",
      "the golden cases' folder (default: the bundle's, or testdata/golden of a checkout)",
    )
    .addOption(
      new Option(
        "--precision <p>",
        "check fp32 and only this of the backend's other precisions (default: every one it offers: webgpu mixed, cuda tf32 and bf16)",
      ).argParser(parsePrecision),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  looplm check --size small --budget 2m   # this machine's CPU kernels: native where they build\n  looplm check --backend webgpu --budget 8m --out runs/check-h200\n  looplm check --backend webgpu --allow-emulation --size small   # SwiftShader, as CI\n  looplm check --backend native --size small\n  looplm check --backend cuda --budget 5m   # fp32, and the GEMM cases in tf32 and bf16\n  looplm check --backend-module examples/recording-backend/index.ts --size small   # a backend of your own",
    )
    .action(async (f: Flags) => {
      const out = resolve(f.out);
      const report = await whileStoppable(out, () =>
        runCheck({
          backend: f.backend,
          backendModule: f.backendModule,
          budgetS: f.budget,
          out,
          allowEmulation: f.allowEmulation === true,
          gpuFeatures: f.gpuFeatures ? asCli(parseGpuFeatures)(f.gpuFeatures) : [],
          size: f.size,
          golden: f.golden,
          precision: f.precision,
          progress: progressLine(),
          notice: (line) => process.stderr.write(`looplm: ${line}\n`),
          commit: commit(),
        }),
      );
      if (process.stderr.isTTY) process.stderr.write("\n");
      if (report.driver.vulkan) process.stdout.write(`${report.driver.vulkan}\n`);
      if (report.adapter)
        process.stdout.write(
          `adapter: ${report.adapter.name}${report.adapter.emulated ? " (emulated: a CPU emulation, not a GPU)" : ""}\n`,
        );
      for (const c of report.cases.filter((c) => !c.ok))
        process.stdout.write(
          `FAIL ${c.name}: ${c.error ?? `${c.worst?.what} ${c.worst?.ratio.toPrecision(3)}× the tolerance`}\n`,
        );
      if (report.figures.length > 0)
        process.stdout.write(
          `speed on ${report.machine.cpu} (${report.machine.cores} cores), load average ${report.machine.load.join(", ")} at the start:\n`,
        );
      for (const fig of report.figures)
        process.stdout.write(
          `${fig.name}: ${Number.isFinite(fig.value) ? fig.value.toPrecision(4) : fig.value} ${fig.unit}${fig.note ? ` (${fig.note})` : ""}${fig.load !== undefined ? ` [load ${fig.load.toFixed(2)}]` : ""}\n`,
        );
      if (report.dropped.length > 0)
        process.stdout.write(
          `dropped for the budget: ${droppedSummary(report.dropped, report.budgetLeftS, report.budgetS)}\n`,
        );
      const { startS, correctnessS, speedS } = report.phases;
      process.stdout.write(
        `${report.passed}/${report.passed + report.failed} correctness cases passed in ${correctnessS.toFixed(1)} s; speed ${speedS.toFixed(1)} s; whole check ${report.seconds.toFixed(0)} s (backend start ${startS.toFixed(1)} s); report in ${out}/report.md\n`,
      );
      if (report.failed > 0)
        throw new CliError(
          `check failed: ${report.failed} correctness case(s) failed (${out}/report.md)`,
        );
    });
}
