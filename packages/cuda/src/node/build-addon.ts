/*
 * The driver addon (native/cuda-driver.c): the prebuilt one where this package (or the offline
 * bundle) carries it for this platform and the same source (prebuilt.ts; Node-API is stable
 * across Node versions, so one build serves every Node), else built with the machine's C
 * compiler on first use: `cc -O2 -fPIC -shared -std=gnu11 -I<node headers> cuda-driver.c -o
 * addon -ldl`. It needs no CUDA headers and no CUDA library at build time (it opens the driver
 * at run time). A build is cached by a hash of the source, the compiler and the Node ABI; `CC`
 * picks the compiler.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeIncludeDir } from "@loop/tensor/node";
import { cudaCacheDir, tempBeside } from "./cache-dir.js";
import { prebuiltAddon } from "./prebuilt.js";

/**
 * A kernel launch as the addons take it (the driver's and the emulator's): the kernel (a function
 * handle, or a name on the emulator), the grid and block sizes, the dynamic shared memory in
 * bytes and the packed parameters.
 */
export type AddonLaunch<K> = (
  kernel: K,
  gx: number,
  gy: number,
  gz: number,
  bx: number,
  by: number,
  bz: number,
  shared: number,
  params: Uint8Array,
) => void;

/** The addon's functions (native/cuda-driver.c). */
export interface DriverAddon {
  /** "" when the driver library at `path` opened with every entry point, else the reason. */
  driverOpen(path: string): string;
  start(ordinal: number): {
    name: string;
    major: number;
    minor: number;
    sms: number;
    memory: number;
    driver: number;
    /** The most shared memory a block may opt in to, in bytes. */
    sharedOptin: number;
  };
  alloc(bytes: number): number;
  release(ptr: number): void;
  upload(ptr: number, data: ArrayBufferView): void;
  zero(ptr: number, bytes: number): void;
  copy(dst: number, src: number, bytes: number): void;
  readStart(ptr: number, bytes: number): number;
  readDone(ticket: number): boolean;
  readTake(ticket: number, out: Uint8Array): void;
  /** Give up on a read whose wait timed out. */
  readCancel(ticket: number): void;
  /** Whether everything enqueued has run within `ms`; throws the GPU's error. */
  waitWithin(ms: number): boolean;
  loadModule(image: Uint8Array): number;
  getFunction(module: number, name: string, maxShared: number): number;
  launch: AddonLaunch<number>;
  nvrtcOpen(path: string): string;
  nvrtcCompile(source: string, name: string, options: string[]): Uint8Array;
  blasLtOpen(path: string): string;
  blasLtGemm(
    transA: number,
    transB: number,
    M: number,
    N: number,
    K: number,
    alpha: number,
    a: number,
    b: number,
    beta: number,
    c: number,
    abType: number,
    compute: number,
  ): number;
}

/** Where the loaded addon came from, for the check's report. */
export type AddonOrigin = { prebuilt: string } | { built: string; cached: boolean };

/** The addon's C source. */
export const ADDON_SOURCE = fileURLToPath(new URL("../../native/cuda-driver.c", import.meta.url));

function run(cc: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cc, args, { timeout: 120_000 }, (err, _out, stderr) => {
      if (!err) return resolve(null);
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        return resolve(
          `no C compiler to build the CUDA driver addon ("${cc}" is not on PATH; set CC)`,
        );
      const first =
        stderr.split("\n").find((l) => l.includes("error")) ?? stderr.trim().split("\n")[0];
      resolve(`${cc} failed on cuda-driver.c: ${first ?? ""}`);
    });
  });
}

/**
 * Check the addon's prototypes of the driver's entry points against a toolkit's cuda.h (in
 * `cudaInclude`): the source compiled with -DLOOP_CHECK_CUDA_H assigns every entry point to
 * its field, and an incompatible pointer type fails. Resolves to null, or the compiler's error.
 */
export async function checkDriverPrototypes(cudaInclude: string): Promise<string | null> {
  const include = nodeIncludeDir();
  if (include === null) return "node_api.h not found beside this Node";
  const cc = process.env.CC ?? "cc";
  return run(cc, [
    "-fsyntax-only",
    "-std=gnu11",
    "-DLOOP_CHECK_CUDA_H",
    "-Werror=incompatible-pointer-types",
    `-I${cudaInclude}`,
    `-I${include}`,
    ADDON_SOURCE,
  ]);
}

/** The flags every build of the addon uses. */
const FLAGS = ["-O2", "-fPIC", "-shared", "-std=gnu11"];

/** Compile the addon with `cc` against the Node-API headers in `include` into `out`. */
export function compileAddon(cc: string, include: string, out: string): Promise<string | null> {
  return run(cc, [...FLAGS, `-I${include}`, ADDON_SOURCE, "-o", out, "-ldl"]);
}

const load = (path: string) => createRequire(import.meta.url)(path) as DriverAddon;

/**
 * The prebuilt addon (no compiler needed), else one built (unless cached) and loaded; a
 * one-line reason when neither can be had.
 */
export async function buildDriverAddon(): Promise<
  { ok: true; addon: DriverAddon; path: string; origin: AddonOrigin } | { ok: false; error: string }
> {
  const pre = prebuiltAddon(existsSync(ADDON_SOURCE) ? readFileSync(ADDON_SOURCE) : null);
  let prebuiltWhy = "";
  if (pre) {
    try {
      return { ok: true, addon: load(pre), path: pre, origin: { prebuilt: pre } };
    } catch (e) {
      // (a libc too old for the build machine's, say): build one here instead
      prebuiltWhy = `; the prebuilt ${pre} did not load (${(e as Error).message.split("\n")[0]})`;
    }
  }
  const include = nodeIncludeDir();
  if (include === null)
    return {
      ok: false,
      error: `node_api.h not found beside this Node (needed to build the CUDA driver addon)${prebuiltWhy}`,
    };
  const cc = process.env.CC ?? "cc";
  const hash = createHash("sha256")
    .update([cc, ...FLAGS, process.versions.modules, process.arch].join("\0"))
    .update(readFileSync(ADDON_SOURCE))
    .digest("hex")
    .slice(0, 16);
  const out = join(cudaCacheDir(), `cuda-driver-${hash}.node`);
  const cached = existsSync(out);
  if (!cached) {
    const tmp = tempBeside(out);
    try {
      const error = await compileAddon(cc, include, tmp);
      if (error !== null) return { ok: false, error: `${error}${prebuiltWhy}` };
      renameSync(tmp, out);
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  try {
    return { ok: true, addon: load(out), path: out, origin: { built: out, cached } };
  } catch (e) {
    return { ok: false, error: `loading ${out} failed: ${(e as Error).message.split("\n")[0]}` };
  }
}
