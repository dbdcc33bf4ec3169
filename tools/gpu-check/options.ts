/** The command line of `pnpm gpu-check`, parsed with commander (as the looplm CLI is). */
import { Command, InvalidArgumentError, Option } from "commander";
import { SUITE_NAMES, type SuiteName } from "./suites.js";

export const BENCH_NAMES = ["matmul", "ssd", "attention", "model"] as const;

export interface Options {
  out: string;
  allowEmulation: boolean;
  quick: boolean;
  suites: SuiteName[];
  /** Only these test files of the chosen suites (relative to the repository root). */
  files: string[] | null;
  bench: string[];
  threads: number;
  gpuPeakGflops?: number;
  timeoutMinutes: number;
}

// (commander names the option and the value before each message)
const list =
  (allowed: readonly string[]) =>
  (value: string): string[] => {
    if (value === "none") return [];
    const names = value.split(",").map((s) => s.trim());
    const bad = names.filter((n) => !allowed.includes(n));
    if (bad.length > 0 || names.length === 0)
      throw new InvalidArgumentError(
        `unknown ${bad.join(", ")}; expected a comma-separated list of ${allowed.join(", ")}, or none`,
      );
    return names;
  };

const positive =
  (integer: boolean) =>
  (value: string): number => {
    const n = Number(value);
    if (!(n > 0) || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(
        `expected a positive ${integer ? "integer" : "number"}, got ${value}`,
      );
    return n;
  };

/** A folder name for this moment: runs/gpu-check/2026-12-01T17-30-05Z. */
export function defaultOut(now: Date): string {
  return `runs/gpu-check/${now
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-")}`;
}

export function parseOptions(argv: readonly string[], now: Date): Options {
  const program = new Command("pnpm gpu-check")
    .description(
      "Prove the WebGPU backend on this machine: list the adapters (a CPU emulation is refused unless " +
        "--allow-emulation; with none, one line for each missing piece), run the GPU correctness " +
        "suites, run the GPU benchmarks, and write one report (report.md, report.json).",
    )
    .addOption(
      new Option("--out <dir>", "the report's folder").default(
        defaultOut(now),
        "runs/gpu-check/<UTC time>",
      ),
    )
    .option(
      "--allow-emulation",
      "check on a CPU emulation (SwiftShader) too: correctness, small shapes",
      false,
    )
    .option("--quick", "fewer benchmark repeats (always on an emulation)", false)
    .addOption(
      new Option("--suites <names>", `the suites to run: ${SUITE_NAMES.join(",")} or none`)
        .argParser(list(SUITE_NAMES))
        .default([...SUITE_NAMES], "all"),
    )
    .addOption(
      new Option(
        "--files <paths>",
        "only these test files of the chosen suites (comma-separated, relative to the repository root)",
      ).argParser((v: string) => v.split(",").map((f) => f.trim())),
    )
    .addOption(
      new Option("--bench <names>", `the benchmarks to run: ${BENCH_NAMES.join(",")} or none`)
        .argParser(list(BENCH_NAMES))
        .default([...BENCH_NAMES], "all four"),
    )
    .addOption(
      new Option(
        "--threads <n>",
        "CPU threads of the benchmarks' native figures (the issue's targets compare with the 2-core step)",
      )
        .argParser(positive(true))
        .default(2),
    )
    .addOption(
      new Option(
        "--gpu-peak-gflops <n>",
        "the GPU's fp32 peak (data sheet) instead of the measured one",
      ).argParser(positive(false)),
    )
    .addOption(
      new Option("--timeout <minutes>", "the longest a phase (suites, benchmarks) may run")
        .argParser(positive(false))
        .default(90),
    )
    .showHelpAfterError(false)
    .exitOverride();
  program.parse(argv, { from: "user" });
  const o = program.opts<{
    out: string;
    allowEmulation: boolean;
    quick: boolean;
    suites: SuiteName[];
    files?: string[];
    bench: string[];
    threads: number;
    gpuPeakGflops?: number;
    timeout: number;
  }>();
  return {
    out: o.out,
    allowEmulation: o.allowEmulation,
    quick: o.quick,
    suites: o.suites,
    files: o.files ?? null,
    bench: o.bench,
    threads: o.threads,
    gpuPeakGflops: o.gpuPeakGflops,
    timeoutMinutes: o.timeout,
  };
}
