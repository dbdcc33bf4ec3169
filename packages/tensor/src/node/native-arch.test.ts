import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { restoreEnvAfterEach, suiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { tensorNativeSource } from "./native.js";
import { buildNativeAddon, nativeArchFlag, nativeIncludeDir } from "./native-addon.js";

// A stand-in compiler: records its arguments and writes an empty "addon" where -o points, so the
// build goes as far as loading it (which fails and names the cached file's path).
const dir = `/tmp/looplm-native-arch-${process.pid}`;
const fakeCc = `${dir}-cc.sh`;
const argsFile = `${dir}-args.txt`;
writeFileSync(
  fakeCc,
  `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nwhile [ $# -gt 1 ]; do [ "$1" = -o ] && : > "$2"; shift; done\n`,
);
chmodSync(fakeCc, 0o755);

afterAll(() => {
  for (const f of [fakeCc, argsFile, dir]) rmSync(f, { recursive: true, force: true });
});

restoreEnvAfterEach(["CC", "LOOPLM_NATIVE_ARCH", "LOOPLM_NATIVE_CACHE"]);

async function fakeBuild(arch: string | undefined): Promise<{ args: string[]; path: string }> {
  process.env.CC = fakeCc;
  process.env.LOOPLM_NATIVE_CACHE = dir;
  if (arch === undefined) delete process.env.LOOPLM_NATIVE_ARCH;
  else process.env.LOOPLM_NATIVE_ARCH = arch;
  rmSync(argsFile, { force: true });
  const r = await buildNativeAddon("tensor", tensorNativeSource);
  expect(r.ok).toBe(false);
  const error = r.ok ? "" : r.error;
  const path = error.match(/^loading (\S+) failed/)?.[1];
  expect(path, error).toBeDefined();
  return { args: readFileSync(argsFile, "utf8").trim().split("\n"), path: path! };
}

describe("LOOPLM_NATIVE_ARCH", () => {
  it("defaults to -march=native", () => {
    delete process.env.LOOPLM_NATIVE_ARCH;
    expect(nativeArchFlag()).toEqual({ ok: true, flag: "-march=native" });
  });

  it("reaches the compiler command and the cache key", async () => {
    const native = await fakeBuild(undefined);
    expect(native.args).toContain("-march=native");
    const v3 = await fakeBuild("x86-64-v3");
    expect(v3.args).toContain("-march=x86-64-v3");
    expect(v3.args.filter((a) => a.startsWith("-march="))).toEqual(["-march=x86-64-v3"]);
    // a build for another target is another cached file, never the -march=native one
    expect(v3.path).not.toBe(native.path);
    expect((await fakeBuild("armv8.2-a+fp16")).args).toContain("-march=armv8.2-a+fp16");
  });

  it("refuses a malformed value with a one-line reason, before any compiler runs", async () => {
    process.env.CC = fakeCc;
    for (const bad of ["x86-64 -O0", "-mavx2", "znver4;rm", "a".repeat(65)]) {
      process.env.LOOPLM_NATIVE_ARCH = bad;
      rmSync(argsFile, { force: true });
      const r = await buildNativeAddon("tensor", tensorNativeSource);
      expect(r).toEqual({
        ok: false,
        error: `LOOPLM_NATIVE_ARCH must be a -march value such as native or x86-64-v3, got ${JSON.stringify(bad)}`,
      });
      expect(() => readFileSync(argsFile)).toThrow();
    }
  });
});

/** `cc` is GCC (its -fopt-info report is what the test below reads). */
function ccIsGcc(): boolean {
  try {
    return /\bgcc\b|Free Software Foundation/.test(
      execFileSync("cc", ["--version"], { encoding: "utf8" }),
    );
  } catch {
    return false;
  }
}

/**
 * Whether the vectorisation check can run here: an x86-64 CPU and GCC as `cc`. Otherwise one
 * printed line says why — and under CI, which runs on x86-64 and installs gcc, it is a failure.
 */
function vectorCheckRuns(): boolean {
  const why =
    process.arch !== "x64"
      ? `it reads x86-64-v3 code, this is ${process.arch}`
      : ccIsGcc()
        ? null
        : "cc is not GCC (the check reads GCC's -fopt-info report)";
  return suiteRuns("the AVX2 vectorisation check", why, "runs on x86-64 with gcc");
}

describe("the build flags", () => {
  // fast-math.h's σ is written branch-free so that elementwise loops calling it vectorise; GCC
  // if-converts its selects only without -ftrapping-math on AVX2 (AVX-512 masks hide the
  // problem), and a scalar σ made the AVX2 build's conv + silu and gated norm 3–5× slower
  it.runIf(vectorCheckRuns())(
    "vectorise a silu loop on AVX2 (x86-64-v3) with the flags an addon is built with",
    async () => {
      rmSync(dir, { recursive: true, force: true }); // (not the cached stand-in: a compile)
      const { args } = await fakeBuild("x86-64-v3");
      const flags = args.filter((a) => /^-(O|march=|f|std=)/.test(a));
      const snippet = `${dir}-silu.c`;
      writeFileSync(
        snippet,
        [
          '#include "fast-math.h"',
          "void silu(const float *restrict x, float *restrict y, long n) {",
          "  for (long i = 0; i < n; i++) y[i] = x[i] * loop_sigmoid(x[i]);",
          "}",
          "",
        ].join("\n"),
      );
      try {
        const cc = spawnSync(
          "cc",
          [
            ...flags,
            `-I${nativeIncludeDir}`,
            "-c",
            snippet,
            "-o",
            "/dev/null",
            "-fopt-info-vec-optimized",
          ],
          { encoding: "utf8" },
        );
        expect(cc.status, cc.stderr).toBe(0);
        expect(cc.stderr).toMatch(
          /silu\.c:3:\d+: optimized: loop vectorized using 32 byte vectors/,
        );
      } finally {
        rmSync(snippet, { force: true });
      }
    },
  );
});
