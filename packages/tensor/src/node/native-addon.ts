/*
 * Build a native kernel addon from C source with the machine's own compiler and load it:
 *   cc -O3 -march=native -fopenmp -fPIC -shared -std=gnu11 -fno-math-errno -fno-trapping-math -I<node headers> -I<include dirs> source -o addon
 * `LOOPLM_NATIVE_ARCH` replaces `native` in `-march=` (e.g. `x86-64-v3`: an AVX2 build on an
 * AVX-512 machine, to keep the AVX2 paths measured and tested where no AVX2-only CPU is at hand).
 * Nothing is downloaded and nothing requires the result: when the compiler, the Node headers or
 * OpenMP are missing, or `LOOPLM_NATIVE=0`, the build answers why and callers keep the portable
 * kernels. Builds are cached by a hash of the sources, flags, Node ABI and CPU under
 * `LOOPLM_NATIVE_CACHE` (default ~/.cache/looplm/native, else the temp dir) and written
 * atomically (compile to a temporary name, then rename), so concurrent builds cannot clash.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath } from "node:url";

/** A native addon built and loaded (its path and exports), or why it could not be. */
export type AddonResult<T> = { ok: true; path: string; addon: T } | { ok: false; error: string };

/** Headers shared by every looplm addon (napi-args.h, fast-math.h). */
export const nativeIncludeDir = fileURLToPath(new URL("../../native", import.meta.url));

/**
 * Every flag but -march (nativeArchFlag), which goes after -O3. -fno-trapping-math: no kernel
 * relies on floating-point traps, and without it GCC leaves the selects of fast-math.h's σ and
 * e^x as branches wherever the target has no masked vectors (AVX2, NEON), so every elementwise
 * loop calling them runs scalar (the AVX2 build's conv + silu and gated norm were 3–5× slower).
 */
const FLAGS = [
  "-fopenmp",
  "-fPIC",
  "-shared",
  "-std=gnu11",
  "-fno-math-errno",
  "-fno-trapping-math",
];

/** A -march value: letters, digits and . _ + - (x86-64-v3, znver4, armv8.2-a+fp16), nothing a
 * shell or the compiler could read as another option. */
const ARCH = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/**
 * The `-march=` flag of native builds: `-march=native` (the CPU this runs on), or
 * `LOOPLM_NATIVE_ARCH` when set; a malformed value is answered with a one-line reason.
 */
export function nativeArchFlag(): { ok: true; flag: string } | { ok: false; error: string } {
  const env = process.env.LOOPLM_NATIVE_ARCH;
  if (env === undefined || env === "") return { ok: true, flag: "-march=native" };
  if (!ARCH.test(env))
    return {
      ok: false,
      error: `LOOPLM_NATIVE_ARCH must be a -march value such as native or x86-64-v3, got ${JSON.stringify(env)}`,
    };
  return { ok: true, flag: `-march=${env}` };
}

/** Directory holding node_api.h: beside the running node, else the usual system places. */
export function nodeIncludeDir(): string | null {
  const candidates = [
    join(dirname(dirname(process.execPath)), "include", "node"),
    "/usr/include/node",
    "/usr/local/include/node",
  ];
  return candidates.find((d) => existsSync(join(d, "node_api.h"))) ?? null;
}

function cacheDir(): string {
  const env = process.env.LOOPLM_NATIVE_CACHE;
  if (env) return env;
  for (const base of [join(homedir(), ".cache"), tmpdir()]) {
    const d = join(base, "looplm", "native");
    try {
      mkdirSync(d, { recursive: true });
      return d;
    } catch {
      // not writable: try the next place
    }
  }
  return join(tmpdir(), "looplm-native");
}

/** Whether native kernels are switched off by `LOOPLM_NATIVE=0|off|false`. */
export function nativeDisabled(): boolean {
  const v = (process.env.LOOPLM_NATIVE ?? "").toLowerCase();
  return v === "0" || v === "off" || v === "false";
}

function compile(cc: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cc, args, { timeout: 180_000 }, (err, _out, stderr) => {
      if (!err) return resolve(null);
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        return resolve(
          process.env.CC
            ? `no C compiler: CC=${cc} is not a program on this machine (set CC to gcc or clang)`
            : `no C compiler: "cc" is not on PATH (install gcc or clang, e.g. apt-get install gcc, or set CC)`,
        );
      const first = stderr.trim().split("\n")[0];
      const code = (err as { code?: unknown }).code;
      resolve(`${cc} failed: ${first || (typeof code === "string" ? code : `exit code ${code}`)}`);
    });
  });
}

const loaded = new Map<string, unknown>();
let builds = 0;

/**
 * Compile (unless cached) and load the addon `name` from `source`; headers next to the source
 * and in `nativeIncludeDir` are part of the cache key.
 */
export async function buildNativeAddon<T>(name: string, source: string): Promise<AddonResult<T>> {
  if (nativeDisabled()) return { ok: false, error: "native kernels disabled by LOOPLM_NATIVE" };
  const include = nodeIncludeDir();
  if (include === null) return { ok: false, error: "node_api.h not found beside this Node" };
  if (!existsSync(source)) return { ok: false, error: `native source ${source} not found` };
  const arch = nativeArchFlag();
  if (!arch.ok) return arch;
  const flags = ["-O3", arch.flag, ...FLAGS];
  const cc = process.env.CC ?? "cc";
  const dirs = [...new Set([resolvePath(dirname(source)), resolvePath(nativeIncludeDir)])];
  const hash = createHash("sha256");
  hash.update([cc, ...flags, process.versions.modules, process.arch, cpus()[0]?.model].join("\0"));
  hash.update(readFileSync(source));
  for (const d of dirs)
    for (const f of readdirSync(d)
      .filter((f) => f.endsWith(".h"))
      .sort())
      hash.update(f).update(readFileSync(join(d, f)));
  const dir = cacheDir();
  const out = join(dir, `${name}-${hash.digest("hex").slice(0, 16)}.node`);
  if (!existsSync(out)) {
    // a name of its own per build, so concurrent builds (processes or calls) never share a file
    const tmp = `${out}.${process.pid}.${++builds}.${basename(source)}.tmp`;
    try {
      mkdirSync(dir, { recursive: true });
      const args = [...flags, `-I${include}`, ...dirs.map((d) => `-I${d}`), source, "-o", tmp];
      const error = await compile(cc, args);
      if (error !== null) return { ok: false, error };
      renameSync(tmp, out);
    } catch (e) {
      return { ok: false, error: `building ${out} failed: ${(e as Error).message.split("\n")[0]}` };
    } finally {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // nothing was written there
      }
    }
  }
  try {
    let addon = loaded.get(out);
    if (addon === undefined) {
      // Idle OpenMP threads spin briefly, then sleep: a training step calls a native kernel
      // every few hundred microseconds, and waking a sleeping thread each time costs two futex
      // calls (~3 % of a step on a VM); spinning longer would starve other work on shared
      // cores. libgomp reads this once, when the first addon loads it; the variable is set only
      // for that moment (child processes, such as the PyTorch benchmark, keep their defaults)
      // and never over the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT.
      const spin = process.env.OMP_WAIT_POLICY === undefined && !process.env.GOMP_SPINCOUNT;
      if (spin) process.env.GOMP_SPINCOUNT = "30000";
      try {
        addon = createRequire(import.meta.url)(out);
      } finally {
        if (spin) delete process.env.GOMP_SPINCOUNT;
      }
      loaded.set(out, addon);
    }
    return { ok: true, path: out, addon: addon as T };
  } catch (e) {
    return { ok: false, error: `loading ${out} failed: ${(e as Error).message.split("\n")[0]}` };
  }
}
