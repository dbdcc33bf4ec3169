/*
 * The report of `looplm check`: one JSON object (report.json) and the same as Markdown
 * (report.md): the machine, the driver, the adapter and its features, every correctness case
 * with its worst error against its tolerance, every speed figure, what the budget dropped.
 */
import { readFileSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { type DroppedCase, droppedSummary } from "./budget.js";
import type { CaseResult } from "./op-conformance.js";
import type { Figure } from "./speed.js";

/** Everything one check found. */
export interface CheckReport {
  /** False in the reports written while the check runs (one cut short leaves those). */
  complete: boolean;
  looplm: string;
  commit: string | null;
  startedAt: string;
  /** Seconds of the whole check so far (start, correctness and speed). */
  seconds: number;
  /** Where those seconds went: starting the backend, the correctness cases, the speed cases. */
  phases: { startS: number; correctnessS: number; speedS: number };
  backend: string;
  /** The backend module's file as given (`--backend-module`); absent for a built-in backend. */
  module?: string;
  size: "small" | "full";
  budgetS: number;
  machine: Machine;
  /**
   * The Vulkan driver line (webgpu on Linux), the NVIDIA kernel driver where there is one, and
   * (cuda) every library the backend used or did not find, a line each.
   */
  driver: { vulkan: string | null; nvidia: string | null; cuda?: readonly string[] };
  adapter: {
    name: string;
    emulated: boolean;
    features: string[];
    subgroupMatrixConfigs: string[];
    requested: string[];
  } | null;
  precisions: string[];
  cases: CaseResult[];
  figures: Figure[];
  /** Speed cases the budget left out, slowest last, each with its estimated seconds. */
  dropped: DroppedCase[];
  /** Seconds of the budget left when the first speed case was dropped (null: none was). */
  budgetLeftS: number | null;
  passed: number;
  failed: number;
}

/** The machine the check ran on. */
export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  /** The load average (1, 5 and 15 minutes) when the check started: other work on the machine. */
  load: number[];
  os: string;
  node: string;
}

function osName(): string {
  try {
    const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync("/etc/os-release", "utf8"));
    if (m) return `${m[1]} (${process.platform} ${process.arch})`;
  } catch {
    // not Linux, or no os-release
  }
  return `${process.platform} ${process.arch}`;
}

/** This machine, as the report names it. */
export function readMachine(): Machine {
  const gib = (b: number) => Math.round((b / 2 ** 30) * 10) / 10;
  return {
    cpu: `${cpus()[0]?.model ?? "unknown"}${cpuFamilyModel()}`,
    cores: cpus().length,
    memoryGiB: gib(totalmem()),
    freeMemoryGiB: gib(freemem()),
    load: loadAverage(),
    os: osName(),
    node: process.version,
  };
}

/**
 * " (family 25, model 1)" from /proc/cpuinfo (Linux), which tells CPU generations apart where
 * the model name does not ("AMD EPYC" in a VM); "" elsewhere.
 */
function cpuFamilyModel(): string {
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8");
    const family = /^cpu family\s*:\s*(\d+)/m.exec(info)?.[1];
    const model = /^model\s*:\s*(\d+)/m.exec(info)?.[1];
    return family && model ? ` (family ${family}, model ${model})` : "";
  } catch {
    return "";
  }
}

/** The 1-, 5- and 15-minute load averages, to two decimals. */
export function loadAverage(): number[] {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}

/** The NVIDIA kernel driver's version line, or null without one. */
export function nvidiaDriver(): string | null {
  try {
    return readFileSync("/proc/driver/nvidia/version", "utf8").split("\n")[0]!.trim();
  } catch {
    return null;
  }
}

const num = (v: number) =>
  !Number.isFinite(v)
    ? String(v)
    : Math.abs(v) >= 100
      ? v.toFixed(0)
      : Math.abs(v) >= 1
        ? v.toFixed(2)
        : v.toPrecision(3);

/** The report as Markdown. */
export function renderMarkdown(r: CheckReport): string {
  const lines: string[] = [];
  const verdict = r.failed === 0 ? "PASS" : "FAIL";
  lines.push(
    `# looplm check ${r.module !== undefined ? `--backend-module ${r.module} (${r.backend})` : `--backend ${r.backend}`}: ${verdict}${r.complete ? "" : " (incomplete: the check was cut short)"}`,
    "",
  );
  lines.push(
    `${r.passed} of ${r.passed + r.failed} correctness cases passed in ${r.phases.correctnessS.toFixed(1)} s; ${r.figures.length} figures in ${r.phases.speedS.toFixed(1)} s; the whole check ${r.seconds.toFixed(0)} s (${r.phases.startS.toFixed(1)} s starting the backend) of a ${r.budgetS.toFixed(0)} s budget; shapes: ${r.size}.`,
    "",
  );
  lines.push("## Machine", "");
  lines.push(
    `- looplm ${r.looplm}${r.commit ? `, commit ${r.commit}` : ""}; started ${r.startedAt}`,
  );
  lines.push(
    `- CPU: ${r.machine.cpu} (${r.machine.cores} cores); memory ${r.machine.memoryGiB} GiB (${r.machine.freeMemoryGiB} free)`,
  );
  lines.push(`- Load average at the start: ${r.machine.load.join(", ")} (1, 5, 15 min)`);
  lines.push(`- OS: ${r.machine.os}; Node ${r.machine.node}`);
  if (r.driver.nvidia) lines.push(`- NVIDIA driver: ${r.driver.nvidia}`);
  if (r.driver.vulkan) lines.push(`- ${r.driver.vulkan}`);
  for (const l of r.driver.cuda ?? []) lines.push(`- ${l}`);
  if (r.adapter) {
    lines.push(
      `- Adapter: ${r.adapter.name}${r.adapter.emulated ? " (EMULATED: a CPU emulation, not a GPU)" : ""}`,
    );
    lines.push(`- Features: ${r.adapter.features.join(", ") || "none"}`);
    lines.push(
      `- Subgroup-matrix configurations: ${r.adapter.subgroupMatrixConfigs.join("; ") || "none"}`,
    );
    lines.push(`- Requested with --gpu-features: ${r.adapter.requested.join(", ") || "none"}`);
  }
  lines.push(`- Precisions checked: ${r.precisions.join(", ")}`, "");
  lines.push("## Correctness", "");
  lines.push(
    "| case | op | result | worst error / tolerance | where | tolerance (atol, rtol) | s |",
  );
  lines.push("|---|---|---|---|---|---|---|");
  for (const c of r.cases) {
    const where = c.error
      ? `error: ${c.error.replace(/\|/g, "\\|")}`
      : c.worst
        ? `${c.worst.what}${c.worst.index >= 0 ? ` [${c.worst.index}]: ${c.worst.got.toPrecision(7)} vs ${c.worst.want.toPrecision(7)}` : ""}`
        : "";
    lines.push(
      `| ${c.name} | ${c.op} | ${c.ok ? "pass" : "**FAIL**"} | ${c.worst ? num(c.worst.ratio) : "—"} | ${where} | ${c.tol.atol}, ${c.tol.rtol} | ${c.seconds.toFixed(1)} |`,
    );
  }
  lines.push("", "## Speed", "");
  if (r.figures.length > 0) {
    lines.push(
      `On ${r.machine.cpu} (${r.machine.cores} cores); the load column is the machine's 1-minute load average as each measurement began (other work slows a figure; the check's own threads count too).`,
      "",
    );
    lines.push("| figure | value | unit | load | note |", "|---|---|---|---|---|");
    for (const f of r.figures)
      lines.push(
        `| ${f.name} | ${num(f.value)} | ${f.unit} | ${f.load?.toFixed(2) ?? ""} | ${f.note ?? ""} |`,
      );
  } else lines.push("No figures.");
  if (r.dropped.length > 0)
    lines.push(
      "",
      `Dropped for the budget (slowest, never a correctness case): ${droppedSummary(r.dropped, r.budgetLeftS, r.budgetS)}.`,
    );
  if (r.adapter?.emulated)
    lines.push("", "The adapter is a CPU emulation: its figures measure the emulator, not a GPU.");
  return `${lines.join("\n")}\n`;
}
