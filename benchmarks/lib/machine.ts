/**
 * What the machine is and what it can do. The CPU is named from /proc/cpuinfo (model name,
 * vendor, family/model, the vector flags that pick the native kernels' code paths) and printed
 * beside every table, since figures from an AVX-512 and an AVX2 machine differ by 2× and more.
 *
 * The fp32 peak behind "% peak" is measured here, per thread count: the native addon's FMA loop
 * (@loop/tensor/node `measureFmaPeak`), built with the same -march as the kernels
 * (LOOPLM_NATIVE_ARCH, default native), each thread's flops over its own CPU time, so other
 * jobs on a shared machine do not lower it. Only when no native build is possible is it estimated,
 * as cores × cpuinfo clock × flop/cycle from the flags, and said so. LOOP_PEAK_GFLOPS (all
 * cores) overrides both.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { measureFmaPeak, nativeArchFlag } from "@loop/tensor/node";

export interface Machine {
  /** "AMD EPYC (AuthenticAMD family 25 model 17; avx512f avx2 fma)". */
  cpu: string;
  cores: number;
  loadAverage: number;
  /** The -march of native builds: "native" or LOOPLM_NATIVE_ARCH. */
  arch: string;
}

export interface Peak {
  gflops: number;
  /** How it was obtained. */
  source: string;
}

function field(info: string, key: string): string | undefined {
  const m = info.match(new RegExp(`^${key}\\s*:\\s*(.*)$`, "m"));
  return m?.[1]?.trim();
}

function cpuinfo(): string {
  try {
    return readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    return ""; // not Linux
  }
}

const VECTOR_FLAGS = ["avx512f", "avx2", "fma", "asimd", "sve"];

export function machine(): Machine {
  const info = cpuinfo();
  const flags = new Set((field(info, "flags") ?? field(info, "Features") ?? "").split(/\s+/));
  const vendor = field(info, "vendor_id");
  const family = field(info, "cpu family");
  const model = field(info, "model");
  const id = vendor ? `${vendor} family ${family} model ${model}` : process.arch;
  const vec = VECTOR_FLAGS.filter((f) => flags.has(f)).join(" ") || "no vector flags listed";
  const arch = nativeArchFlag();
  return {
    cpu: `${field(info, "model name") ?? "unknown CPU"} (${id}; ${vec})`,
    cores: availableParallelism(),
    loadAverage: loadavg()[0] ?? 0,
    arch: arch.ok ? arch.flag.slice("-march=".length) : `invalid (${arch.error})`,
  };
}

/** fp32 flops per cycle per core from vendor, family and flags (the estimate's last resort). */
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

function estimate(threads: number, why: string): Peak {
  const info = cpuinfo();
  const mhz = Number(field(info, "cpu MHz"));
  const flags = new Set((field(info, "flags") ?? "").split(/\s+/));
  const fpc = flopsPerCycle(
    field(info, "vendor_id") ?? "",
    Number(field(info, "cpu family")),
    flags,
  );
  if (!(mhz > 0)) return { gflops: Number.NaN, source: `unknown: ${why}, and no clock in cpuinfo` };
  return {
    gflops: (threads * mhz * fpc) / 1000,
    source: `estimated (${why}): ${threads} × ${(mhz / 1000).toFixed(2)} GHz (cpuinfo) × ${fpc} flop/cycle`,
  };
}

const peaks = new Map<number, Promise<Peak>>();

/** The fp32 peak of `threads` threads, measured once per process and thread count. */
export function peak(threads: number): Promise<Peak> {
  let p = peaks.get(threads);
  if (p === undefined) {
    p = (async () => {
      const env = Number(process.env.LOOP_PEAK_GFLOPS);
      if (Number.isFinite(env) && env > 0)
        return {
          gflops: (env * threads) / availableParallelism(),
          source: "LOOP_PEAK_GFLOPS × threads / cores",
        };
      const m = await measureFmaPeak(threads, { runMs: 20, repeats: 10 });
      if (!m.ok) return estimate(threads, `no native build: ${m.error}`);
      return {
        gflops: m.gflops,
        source: `measured: FMA loop, ${m.isa} build, flops per thread CPU-second, best of 10`,
      };
    })();
    peaks.set(threads, p);
  }
  return p;
}
