/**
 * The one report of a check, as JSON (everything) and Markdown (for people): the adapter and its
 * driver, features and limits, the CPU beside it, each suite's counts, each benchmark figure, the
 * GPU/CPU ratios, the measured peak, and the wall-clock of each phase.
 */
import {
  type AdapterInfo,
  adapterName,
  FEATURES_OF_INTEREST,
  isEmulation,
  LIMITS_OF_INTEREST,
} from "./adapter-info.js";
import {
  type BenchTable,
  bestGemm,
  type Cell,
  type DispatchFigures,
  dispatchFigures,
  isRatioColumn,
} from "./bench-output.js";
import { type CpuInfo, SIMD_FLAGS } from "./cpu-info.js";
import type { Diagnosis } from "./diagnose.js";
import type { Probe } from "./probe.js";
import type { BenchRun } from "./run-bench.js";
import type { SuiteResult } from "./run-suites.js";

/** The issue's budget for a whole check on a machine with a GPU and 16 cores. */
export const BUDGET_S = 9 * 60;

export interface Ratio {
  bench: string;
  case: string;
  column: string;
  value: number;
}

export interface Report {
  tool: "pnpm gpu-check";
  ok: boolean;
  startedAt: string;
  command: string;
  commit: string | null;
  verdict: Diagnosis["verdict"];
  problems: string[];
  warnings: string[];
  adapter: (AdapterInfo & { name: string; emulated: boolean; driver: string }) | null;
  /** Every adapter Dawn answered with (high-performance, low-power, fallback). */
  adapters: { name: string; requestedAs: string; emulated: boolean }[];
  /** Every adapter Dawn enumerates, with its backend. */
  enumerated: string[];
  system: Pick<
    Probe,
    "vulkanLoader" | "icdFiles" | "icdOverride" | "nvidia" | "nvidiaDriverCapabilities"
  > & { vkIcdFilenamesForChildren: string | null };
  cpu: CpuInfo;
  suites: SuiteResult[];
  bench:
    | (Omit<BenchRun, "output"> & {
        gpuPeak: { gflops: number; source: string } | null;
        bestGemm: ReturnType<typeof bestGemm>;
        cpuPeaks: { threads: number; gflops: number; source: string }[];
        machine: string | null;
        tables: BenchTable[];
        ratios: Ratio[];
        /** Dispatches, bind groups and encoding time of a training step, per configuration. */
        dispatches: DispatchFigures[];
      })
    | null;
  phases: { name: string; seconds: number }[];
  wallClockS: number;
  budgetS: number;
}

/** Every GPU/CPU ratio the bench printed, named by its table's first column (and layout). */
export function ratios(tables: readonly BenchTable[]): Ratio[] {
  const out: Ratio[] = [];
  for (const t of tables)
    for (const column of t.columns.filter(isRatioColumn))
      for (const r of t.rows) {
        const v = r[column];
        if (typeof v !== "number") continue;
        const label = [r[t.columns[0]!], r.layout].filter((x) => x !== undefined && x !== "");
        out.push({ bench: t.bench, case: label.join(" "), column, value: v });
      }
  return out;
}

/** The driver as the OS tells it (NVIDIA's kernel module), else the adapter's description. */
export function driverOf(adapter: AdapterInfo, nvidia: Probe["nvidia"]): string {
  const module = nvidia?.version?.match(/Kernel Module\s+(\S+)/)?.[1];
  const parts = [module ? `NVIDIA kernel module ${module}` : null, adapter.description || null];
  return parts.filter((p) => p).join("; ") || "not reported";
}

export function benchSection(run: BenchRun): NonNullable<Report["bench"]> {
  const { output, ...rest } = run;
  return {
    ...rest,
    gpuPeak: output.gpuPeak,
    bestGemm: bestGemm(output.tables),
    cpuPeaks: output.cpuPeaks,
    machine: output.machine,
    tables: output.tables,
    ratios: ratios(output.tables),
    dispatches: dispatchFigures(output.tables),
  };
}

export function describeAdapter(
  a: AdapterInfo,
  nvidia: Probe["nvidia"],
): NonNullable<Report["adapter"]> {
  return { ...a, name: adapterName(a), emulated: isEmulation(a), driver: driverOf(a, nvidia) };
}

// --- Markdown ------------------------------------------------------------------------------------

const esc = (v: Cell | null | undefined) => String(v ?? "").replaceAll("|", "\\|");

function mdTable(
  columns: readonly string[],
  rows: readonly (readonly (Cell | null)[])[],
): string[] {
  const numeric = columns.map((_, j) => rows.every((r) => typeof r[j] === "number" || r[j] === ""));
  return [
    `| ${columns.map(esc).join(" | ")} |`,
    `| ${columns.map((_, j) => (numeric[j] ? "---:" : "---")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ];
}

const seconds = (s: number) => (s >= 90 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(1)} s`);

export function renderMarkdown(r: Report): string {
  const out: string[] = [];
  out.push(`# GPU check: ${r.ok ? "passed" : "FAILED"}`, "");
  out.push(`- command: \`${r.command}\``);
  out.push(`- started: ${r.startedAt}; commit ${r.commit ?? "unknown"}`);
  out.push(
    `- wall-clock: ${seconds(r.wallClockS)} (budget on a machine with a GPU and 16 cores: ${seconds(r.budgetS)})`,
  );
  out.push(`- verdict: ${r.verdict}`);
  for (const p of r.problems) out.push(`- **problem**: ${p}`);
  for (const w of r.warnings) out.push(`- warning: ${w}`);
  out.push("", "## Adapter", "");
  const a = r.adapter;
  if (!a) out.push("No adapter.");
  else {
    out.push(
      ...mdTable(
        ["", ""],
        [
          ["name", a.name],
          ["vendor", a.vendor],
          ["architecture", a.architecture],
          ["device", a.device],
          ["description", a.description],
          ["driver", a.driver],
          ["CPU emulation", a.emulated ? "yes" : "no"],
          ["fallback adapter (Dawn)", a.isFallbackAdapter ? "yes" : "no"],
          [
            "subgroup sizes",
            a.subgroupMinSize === null ? "" : `${a.subgroupMinSize}–${a.subgroupMaxSize}`,
          ],
          ...FEATURES_OF_INTEREST.map((f): [string, string] => [
            f,
            a.features.includes(f) ? "yes" : "no",
          ]),
          ...LIMITS_OF_INTEREST.map((l): [string, Cell] => [l, a.limits[l] ?? ""]),
        ],
      ),
    );
    out.push("", `All features: ${a.features.join(", ") || "none"}.`);
  }
  if (r.adapters.length > 0) {
    // the same adapter asked for in several ways is named once, with each way
    const ways = new Map<string, string[]>();
    for (const x of r.adapters) {
      const key = `${x.name}${x.emulated ? " (CPU emulation)" : ""}`;
      ways.set(key, [...(ways.get(key) ?? []), x.requestedAs]);
    }
    const answered = [...ways].map(([name, how]) => `${name} (asked for as ${how.join(", ")})`);
    out.push("", `Adapters answered: ${answered.join("; ")}.`);
  }
  if (r.enumerated.length > 0) out.push(`Adapters Dawn enumerates: ${r.enumerated.join("; ")}.`);
  const s = r.system;
  out.push(
    "",
    `Vulkan loader: ${s.vulkanLoader ?? "not found"}; ICD files: ${s.icdFiles.join(", ") || "none"}` +
      `${s.icdOverride ? `; ${s.icdOverride.name}=${s.icdOverride.files.join(":")}` : ""}` +
      `${s.vkIcdFilenamesForChildren ? `; suites and bench ran with VK_ICD_FILENAMES=${s.vkIcdFilenamesForChildren}` : ""}` +
      `; NVIDIA: ${s.nvidia ? `${s.nvidia.version ?? "no version"} (${s.nvidia.devices.join(", ")})` : "none"}` +
      `${s.nvidiaDriverCapabilities !== null ? `; NVIDIA_DRIVER_CAPABILITIES=${s.nvidiaDriverCapabilities}` : ""}.`,
  );
  out.push("", "## CPU", "");
  const simd = SIMD_FLAGS.filter((f) => r.cpu.flags.includes(f));
  out.push(
    `${r.cpu.model}, ${r.cpu.cores} logical CPUs; SIMD: ${simd.join(", ") || "none listed"}; load average ${r.cpu.loadAverage.start.toFixed(2)} at the start, ${r.cpu.loadAverage.end?.toFixed(2) ?? "?"} at the end.`,
  );
  out.push("", "## Correctness suites", "");
  if (r.suites.length === 0) out.push("Not run.");
  else {
    out.push(
      ...mdTable(
        ["suite", "what", "files", "passed", "failed", "skipped", "result", "vitest run"],
        r.suites.map((x) => [
          x.name,
          x.what,
          x.files,
          x.passed,
          x.failed,
          x.skipped,
          x.ok ? "pass" : "FAIL",
          seconds(x.seconds),
        ]),
      ),
    );
    for (const x of r.suites) for (const f of x.failures) out.push(`- ${x.name}: ${f}`);
  }
  out.push("", "## Benchmarks", "");
  const b = r.bench;
  if (!b) out.push("Not run.");
  else {
    out.push(`\`${b.command}\` (${seconds(b.seconds)}): ${b.ok ? "finished" : "FAILED"}`);
    for (const f of b.failures) out.push(`- ${f}`);
    out.push("");
    if (b.machine) out.push(`- machine: ${b.machine}`);
    for (const p of b.cpuPeaks)
      out.push(`- CPU fp32 peak, ${p.threads} thread(s): ${p.gflops} GFLOP/s (${p.source})`);
    out.push(
      `- GPU fp32 peak: ${b.gpuPeak ? `${b.gpuPeak.gflops} GFLOP/s (${b.gpuPeak.source})` : "not printed"}`,
    );
    if (b.bestGemm)
      out.push(
        `- fastest GEMM: ${b.bestGemm.shape} ${b.bestGemm.layout}, ${b.bestGemm.gflops} GFLOP/s` +
          `${b.bestGemm.pctPeak !== null ? ` (${b.bestGemm.pctPeak} % of the GPU peak)` : ""}`,
      );
    if (b.ratios.length > 0) {
      out.push("", "GPU/CPU (> 1: the GPU is faster):", "");
      out.push(
        ...mdTable(
          ["bench", "case", "ratio", "GPU/CPU"],
          b.ratios.map((x) => [x.bench, x.case, x.column, x.value]),
        ),
      );
    }
    if (b.dispatches.length > 0) {
      out.push(
        "",
        "Command encoding of a training step (per layer application: forward + backward):",
        "",
      );
      const opt = (v: number | null) => v ?? "";
      out.push(
        ...mdTable(
          [
            "config",
            "dispatches/step",
            "Mamba-2 layer",
            "attention layer",
            "bind groups/step",
            "µs encode/dispatch",
          ],
          b.dispatches.map((d) => [
            d.config,
            d.dispatchesPerStep,
            opt(d.mamba2PerLayerApplication),
            opt(d.attentionPerLayerApplication),
            opt(d.bindGroupsPerStep),
            opt(d.encodeUsPerDispatch),
          ]),
        ),
      );
    }
    for (const t of b.tables) {
      out.push("", `### ${t.bench}${t.title ? `: ${t.title}` : ""}`, "");
      out.push(
        ...mdTable(
          t.columns,
          t.rows.map((row) => t.columns.map((c) => row[c] ?? "")),
        ),
      );
    }
  }
  out.push("", "## Phases", "");
  out.push(
    ...mdTable(
      ["phase", "wall-clock"],
      r.phases.map((p) => [p.name, seconds(p.seconds)]),
    ),
  );
  out.push("");
  return out.join("\n");
}
