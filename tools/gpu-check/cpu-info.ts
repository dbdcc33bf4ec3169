/** The CPU beside the GPU (its figures are the denominators of the GPU/CPU ratios). */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

export interface CpuInfo {
  model: string;
  /** Logical CPUs. */
  cores: number;
  /** Every flag of /proc/cpuinfo's first processor. */
  flags: string[];
  /** The one-minute load average when the check started and ended. */
  loadAverage: { start: number; end: number | null };
}

/** The SIMD flags the native CPU kernels care about, in the order the report names them. */
export const SIMD_FLAGS = [
  "sse4_2",
  "avx",
  "avx2",
  "fma",
  "avx512f",
  "avx512bw",
  "avx512_bf16",
  "avx512_fp16",
  "amx_tile",
  "asimd",
  "sve",
];

/** Model name and flags of the first processor in /proc/cpuinfo's text. */
export function parseCpuinfo(text: string): { model: string | null; flags: string[] } {
  const field = (name: string) =>
    new RegExp(`^${name}\\s*:\\s*(.*)$`, "m").exec(text)?.[1]?.trim() ?? null;
  const model = field("model name") ?? field("Hardware") ?? field("CPU part");
  const flags = (field("flags") ?? field("Features") ?? "").split(/\s+/).filter((f) => f);
  return { model, flags };
}

export function readCpuInfo(): CpuInfo {
  let parsed: { model: string | null; flags: string[] } = { model: null, flags: [] };
  try {
    parsed = parseCpuinfo(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    // not Linux: the model from Node alone
  }
  return {
    model: parsed.model ?? cpus()[0]?.model ?? "unknown CPU",
    cores: cpus().length,
    flags: parsed.flags,
    loadAverage: { start: loadavg()[0]!, end: null },
  };
}
