/**
 * Build the PROTOTYPE native GEMM (sgemm.c) from source with the system C compiler:
 * `pnpm exec tsx tools/native/build-native.ts`. Output: tools/native/build/sgemm.node (ignored
 * by git; machine-specific because of -march=native). Nothing in the project needs it: when the
 * compiler, the Node headers or OpenMP are missing the build reports why and everything keeps
 * using the portable kernels. Never downloads anything.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
export const nativeSource = join(here, "sgemm.c");
export const nativeOutput = join(here, "build", "sgemm.node");

/** Directory holding node_api.h: beside the running node, else the Debian location. */
function nodeIncludeDir(): string | null {
  const candidates = [
    join(dirname(dirname(process.execPath)), "include", "node"),
    "/usr/include/node",
    "/usr/local/include/node",
  ];
  return candidates.find((d) => existsSync(join(d, "node_api.h"))) ?? null;
}

export type BuildResult = { ok: true; path: string } | { ok: false; error: string };

/** Compile sgemm.c unless the output is newer than the source. */
export function buildNativeGemm(force = false): Promise<BuildResult> {
  if (
    !force &&
    existsSync(nativeOutput) &&
    statSync(nativeOutput).mtimeMs >= statSync(nativeSource).mtimeMs
  ) {
    return Promise.resolve({ ok: true, path: nativeOutput });
  }
  const include = nodeIncludeDir();
  if (include === null) return Promise.resolve({ ok: false, error: "node_api.h not found" });
  mkdirSync(dirname(nativeOutput), { recursive: true });
  const cc = process.env.CC ?? "cc";
  const args = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", `-I${include}`];
  return new Promise((resolve) => {
    execFile(cc, [...args, nativeSource, "-o", nativeOutput], { timeout: 120_000 }, (err, _o, e) =>
      resolve(
        err
          ? { ok: false, error: `${cc} failed: ${e || err.message}` }
          : { ok: true, path: nativeOutput },
      ),
    );
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await buildNativeGemm(true);
  console.log(r.ok ? `built ${r.path}` : `native GEMM not built: ${r.error}`);
}
