/**
 * What the machine can do: CPU model, cores, and the fp32 peak, derived from /proc/cpuinfo as
 * cores × clock × fp32 flop per cycle per core (two FMA pipes × vector lanes × 2), with the
 * vector width from the CPU flags. The clock is the "cpu MHz" line, which under a hypervisor is
 * usually the base clock, so the figure is a floor: on the reference machine (2 Zen 5 cores, 2.1 GHz
 * in cpuinfo) one core runs the native GEMM at 150–180 GFLOP/s, above the floor's 134 per core.
 * The peak used is therefore the larger of that floor and the documented 215 GFLOP/s per core of
 * the reference machine (430 on its 2 cores, as the speed issue quotes); LOOP_PEAK_GFLOPS
 * overrides both.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  /** fp32 GFLOP/s peak of all cores together. */
  peakGflops: number;
  /** How peakGflops was obtained. */
  peakSource: string;
  loadAverage: number;
}

export const DOCUMENTED_PEAK_GFLOPS = 430;

function field(info: string, key: string): string | undefined {
  const m = info.match(new RegExp(`^${key}\\s*:\\s*(.*)$`, "m"));
  return m?.[1]?.trim();
}

/** fp32 flops per cycle per core from vendor, family and flags. */
export function flopsPerCycle(vendor: string, family: number, flags: Set<string>): number {
  if (flags.has("avx512f")) {
    // Zen 4 (family 25) runs 512-bit ops on 256-bit pipes; Zen 5 and Intel server cores are 512-bit
    if (vendor === "AuthenticAMD" && family < 26) return 32;
    return 64;
  }
  if (flags.has("avx2") && flags.has("fma")) return 32;
  if (flags.has("avx")) return 16;
  return 8;
}

export function machine(): Machine {
  const cores = availableParallelism();
  const loadAverage = loadavg()[0] ?? 0;
  const env = Number(process.env.LOOP_PEAK_GFLOPS);
  let info = "";
  try {
    info = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    // not Linux
  }
  const cpu = field(info, "model name") ?? "unknown CPU";
  if (Number.isFinite(env) && env > 0) {
    return { cpu, cores, peakGflops: env, peakSource: "LOOP_PEAK_GFLOPS", loadAverage };
  }
  const mhz = Number(field(info, "cpu MHz"));
  const flags = new Set((field(info, "flags") ?? "").split(/\s+/));
  if (!(mhz > 0) || flags.size < 2) {
    return {
      cpu,
      cores,
      peakGflops: DOCUMENTED_PEAK_GFLOPS,
      peakSource: "documented reference machine",
      loadAverage,
    };
  }
  const vendor = field(info, "vendor_id") ?? "";
  const family = Number(field(info, "cpu family") ?? 0);
  const fpc = flopsPerCycle(vendor, family, flags);
  const floor = (cores * mhz * fpc) / 1000;
  const derived = `${cores} cores × ${(mhz / 1000).toFixed(2)} GHz (cpuinfo) × ${fpc} flop/cycle`;
  const documented = (DOCUMENTED_PEAK_GFLOPS * cores) / 2;
  if (floor >= documented)
    return { cpu, cores, peakGflops: floor, peakSource: derived, loadAverage };
  const peakSource = `${cores} × 215 GFLOP/s per core, the reference machine's peak; cpuinfo's base clock gives only ${floor.toFixed(0)} (${derived})`;
  return { cpu, cores, peakGflops: documented, peakSource, loadAverage };
}
