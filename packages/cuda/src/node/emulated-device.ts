/*
 * The backend's kernels on the host: an emulated `CudaDevice` (emulator/cuda-emulator.h,
 * emulator/emulator-addon.cc) built on first use with the machine's C++ compiler from the same
 * kernel unit the GPU compiles (less its CUDA includes), cached by a hash like the other builds:
 *   c++ -std=c++20 -O1 -pthread -fPIC -shared -I<node headers> emulator-addon.cc -o addon
 * Host memory, blocks one after another, each block's threads as OS threads. It checks the
 * kernels' arithmetic, indexing and tile layouts against the CPU's ops on machines without a GPU
 * (packages/looplm/src/cuda-emulated.test.ts); it is slow and says nothing about speed or the
 * GPU's memory model. `CXX` picks the compiler.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeIncludeDir } from "@loop/tensor/node";
import type { CudaDevice } from "../device.js";
import { KERNELS } from "../kernel-table.js";
import type { AddonLaunch } from "./build-addon.js";
import { cudaCacheDir, tempBeside } from "./cache-dir.js";
import { kernelUnit } from "./compile-kernels.js";

const EMULATOR_DIR = fileURLToPath(new URL("../../emulator/", import.meta.url));

interface EmulatorAddon {
  alloc(bytes: number): number;
  release(ptr: number): void;
  upload(ptr: number, data: ArrayBufferView): void;
  download(ptr: number, out: Uint8Array): void;
  zero(ptr: number, bytes: number): void;
  copy(dst: number, src: number, bytes: number): void;
  launch: AddonLaunch<string>;
}

/** The kernel unit as the host compiles it: no CUDA headers, dynamic shared memory from the emulator. */
function hostUnit(): string {
  return kernelUnit()
    .replace(/#include <cuda_bf16\.h>\n/g, "")
    .replace(/#include <mma\.h>\n/g, "")
    .replace(
      /extern __shared__ float sh\[\];/g,
      "float *sh = (float *)loop_emu::dynamic_shared();",
    );
}

function compile(cxx: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cxx, args, { timeout: 600_000, maxBuffer: 16 << 20 }, (err, _out, stderr) => {
      if (!err) return resolve(null);
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        return resolve(`no C++ compiler for the CUDA emulator ("${cxx}" is not on PATH; set CXX)`);
      const first =
        stderr.split("\n").find((l) => l.includes("error")) ?? stderr.trim().split("\n")[0];
      resolve(`${cxx} failed on the CUDA emulator: ${first ?? ""}`);
    });
  });
}

/** Build (unless cached) and start the emulated device; a one-line reason when it cannot. */
export async function startEmulatedDevice(): Promise<
  { ok: true; device: CudaDevice } | { ok: false; reason: string }
> {
  const include = nodeIncludeDir();
  if (include === null) return { ok: false, reason: "node_api.h not found beside this Node" };
  const cxx = process.env.CXX ?? "c++";
  const flags = ["-std=c++20", "-O1", "-pthread", "-fPIC", "-shared"];
  const unit = hostUnit();
  const dispatch = `${Object.keys(KERNELS)
    .map((k) => `LOOP_KERNEL(${k})`)
    .join("\n")}\n`;
  const hash = createHash("sha256")
    .update([cxx, ...flags, process.versions.modules].join("\0"))
    .update(unit)
    .update(dispatch);
  for (const f of ["cuda-emulator.h", "emulator-addon.cc"])
    hash.update(readFileSync(join(EMULATOR_DIR, f)));
  const key = hash.digest("hex").slice(0, 16);
  const out = join(cudaCacheDir(), `cuda-emulator-${key}.node`);
  if (!existsSync(out)) {
    const work = `${tempBeside(out)}.d`;
    const tmp = tempBeside(out);
    try {
      mkdirSync(work, { recursive: true });
      writeFileSync(join(work, "kernels-unit.inc"), unit);
      writeFileSync(join(work, "kernels-dispatch.inc"), dispatch);
      const error = await compile(cxx, [
        ...flags,
        `-I${include}`,
        `-I${work}`,
        `-I${EMULATOR_DIR}`,
        join(EMULATOR_DIR, "emulator-addon.cc"),
        "-o",
        tmp,
      ]);
      if (error !== null) return { ok: false, reason: error };
      renameSync(tmp, out);
    } finally {
      rmSync(tmp, { force: true });
      rmSync(work, { recursive: true, force: true });
    }
  }
  let addon: EmulatorAddon;
  try {
    addon = createRequire(import.meta.url)(out) as EmulatorAddon;
  } catch (e) {
    return { ok: false, reason: `loading ${out} failed: ${(e as Error).message.split("\n")[0]}` };
  }
  const device: CudaDevice = {
    name: "CUDA emulator (host)",
    alloc: (bytes) => addon.alloc(bytes),
    free: (ptr) => addon.release(ptr),
    upload: (ptr, data) => addon.upload(ptr, data),
    zero: (ptr, bytes) => addon.zero(ptr, bytes),
    copy: (dst, src, bytes) => addon.copy(dst, src, bytes),
    async read(ptr, bytes) {
      const out = new Uint8Array(bytes);
      addon.download(ptr, out);
      return out.buffer;
    },
    launch: (kernel, grid, block, shared, args) =>
      addon.launch(kernel, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, args),
    destroy() {},
  };
  return { ok: true, device };
}
