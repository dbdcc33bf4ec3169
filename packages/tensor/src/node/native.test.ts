import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { itBuildsNativeAddon, nativeBuildExpected, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { gemmName } from "../kernels/gemm.js";
import { gemmMaxError } from "../kernels/gemm-check.test-util.js";
import { kernelSet, nativeKernelNames } from "../native-registry.js";
import { ceBackward, ceForward } from "../ops/cross-entropy-kernels.js";
import { embeddingBwd } from "../ops/embedding.js";
import { rmsnormRows, rmsnormRowsBackward } from "../ops/rmsnorm.js";
import { siluRowsBwd, siluRowsFwd } from "../ops/silu-split.js";
import { silu } from "../ops/unary.js";
import { AdamW } from "../optim/adamw.js";
import { Tensor } from "../tensor.js";
import {
  disableNativeTensorKernels,
  enableNativeAddons,
  enableNativeTensorKernels,
  TENSOR_KERNELS,
  type TensorAddon,
} from "./native.js";
import { buildNativeAddon } from "./native-addon.js";

const built = await buildNativeAddon<TensorAddon>(
  "tensor",
  new URL("../../native/tensor.c", import.meta.url).pathname,
);

describe("native addon build", () => {
  it("reports a missing source or a failing compiler as a reason, never throws", async () => {
    const missing = await buildNativeAddon("x", "/nonexistent/kernels.c");
    expect(missing).toEqual({ ok: false, error: "native source /nonexistent/kernels.c not found" });
    const prev = process.env.CC;
    process.env.CC = "false";
    process.env.LOOPLM_NATIVE_CACHE = `/tmp/looplm-native-test-${process.pid}`;
    try {
      const r = await buildNativeAddon(
        "t",
        new URL("../../native/tensor.c", import.meta.url).pathname,
      );
      expect(r.ok ? r.path : r.error).toMatch(/^false failed/);
    } finally {
      if (prev === undefined) delete process.env.CC;
      else process.env.CC = prev;
      delete process.env.LOOPLM_NATIVE_CACHE;
    }
  });

  it.runIf(nativeBuildExpected("concurrent native builds"))(
    "builds concurrently without clashing",
    async () => {
      const source = new URL("../../native/tensor.c", import.meta.url).pathname;
      process.env.LOOPLM_NATIVE_CACHE = `/tmp/looplm-native-concurrent-${process.pid}`;
      try {
        const [a, b] = await Promise.all([
          buildNativeAddon("tensor", source),
          buildNativeAddon("tensor", source),
        ]);
        const path = (r: typeof a) => (r.ok ? r.path : r.error);
        expect(path(a)).toMatch(/tensor-[0-9a-f]{16}\.node$/);
        expect(path(b)).toBe(path(a));
      } finally {
        delete process.env.LOOPLM_NATIVE_CACHE;
      }
    },
  );

  it("reports an unusable cache folder", async () => {
    const source = new URL("../../native/tensor.c", import.meta.url).pathname;
    try {
      const notADir = `/tmp/looplm-native-file-${process.pid}`;
      writeFileSync(notADir, "");
      process.env.LOOPLM_NATIVE_CACHE = `${notADir}/cache`;
      const r = await buildNativeAddon("tensor", source);
      expect(r.ok ? r.path : r.error).toMatch(/^building .*\/cache\/tensor-.* failed: ENOTDIR/);
    } finally {
      delete process.env.LOOPLM_NATIVE_CACHE;
    }
  });

  it("is switched off by LOOPLM_NATIVE=0", async () => {
    process.env.LOOPLM_NATIVE = "0";
    try {
      const r = await enableNativeTensorKernels();
      expect(r).toEqual({ ok: false, error: "native kernels disabled by LOOPLM_NATIVE" });
      expect(gemmName()).not.toBe("native");
    } finally {
      delete process.env.LOOPLM_NATIVE;
    }
  });

  itBuildsNativeAddon("tensor", built);
});

describe.runIf(nativeSuiteRuns("native tensor kernels", built))(
  "native tensor kernels match the portable ones",
  () => {
    const addon = (built as { addon: TensorAddon }).addon;
    afterAll(() => disableNativeTensorKernels());

    const shapes: [number, number, number][] = [
      [1, 1, 1],
      [5, 7, 3],
      // M ≤ 8 with op(B) = Bᵀ takes gemv.h's dot products (threaded from 4e5 multiply-adds)
      [1, 70, 37],
      [8, 300, 257],
      [3, 1001, 200],
      [12, 32, 17],
      [13, 33, 300],
      [64, 64, 16],
      [97, 45, 64],
      [300, 70, 513],
      [64, 296, 2100],
      [2100, 40, 64],
      [800, 70, 600],
    ];
    for (const threads of [1, 2, 3]) {
      it(`sgemm equals gemmRef on every shape and layout (${threads} thread(s))`, () => {
        addon.setThreads(threads);
        for (const [M, N, K] of shapes)
          for (const transA of [false, true])
            for (const transB of [false, true])
              for (const [alpha, beta] of [
                [1, 0],
                [0.5, 1],
                [-1.5, 0.25],
              ] as const) {
                const c = { M, N, K, transA, transB, alpha, beta, pad: 3, off: 5, shared: true };
                expect(gemmMaxError(addon.sgemm, c), JSON.stringify(c)).toBeLessThan(
                  2e-5 * Math.sqrt(K) + 1e-6,
                );
              }
        addon.setThreads(1);
      });
    }

    it("sgemm with K = 0 scales C by beta", () => {
      const c = { M: 9, N: 40, K: 0, transA: false, transB: false, alpha: 1, beta: 0.5 };
      expect(gemmMaxError(addon.sgemm, c)).toBe(0);
    });

    it("gives the same C for any thread count (disjoint blocks, and a K cut fixed by the shape)", () => {
      // 700×90×130 and 800×70×600 hand C's row blocks to threads as they free up (over one and
      // three KC slabs of K); 40×70×2300 (Aᵀ) cuts K in two halves summed in a fixed order;
      // 8×300×257 (Bᵀ) is gemv.h's path, blocks of eight columns of C per thread
      for (const [M, N, K, transA, transB] of [
        [700, 90, 130, false, false],
        [800, 70, 600, false, false],
        [40, 70, 2300, true, false],
        [8, 300, 257, false, true],
      ] as const) {
        const A = Float32Array.from({ length: M * K }, (_, i) => Math.sin(i));
        const B = Float32Array.from({ length: K * N }, (_, i) => Math.cos(i));
        const run = (t: number) => {
          addon.setThreads(t);
          const C = Float32Array.from({ length: M * N }, (_, i) => Math.sin(3 * i));
          const [lda, ldb] = [transA ? M : K, transB ? K : N];
          addon.sgemm(transA, transB, M, N, K, 0.5, A, 0, lda, B, 0, ldb, 0.75, C, 0, N);
          return C;
        };
        const one = run(1);
        expect(run(2)).toEqual(one);
        expect(run(3)).toEqual(one);
      }
      addon.setThreads(1);
    });

    it("silu forward and backward equal the portable loops, and enable routes ops to them", async () => {
      const n = 70_001;
      const x = new Tensor(
        Float32Array.from({ length: n }, (_, i) => (i % 2 ? -1 : 1) * (i / 997) ** 1.3 - 0.1),
        [n],
      );
      x.requiresGrad = true;
      const portable = silu(x);
      const r = await enableNativeTensorKernels();
      expect(r.ok).toBe(true);
      expect(gemmName()).toBe("native");
      expect(nativeKernelNames()).toEqual(
        expect.arrayContaining(["tensor/sgemm", "tensor/siluFwd"]),
      );
      const native = silu(x);
      for (let i = 0; i < n; i++)
        expect(Math.abs(native.data[i]! - portable.data[i]!)).toBeLessThanOrEqual(
          2e-7 * Math.max(1, Math.abs(portable.data[i]!)),
        );
      const g = Float32Array.from({ length: n }, (_, i) => Math.cos(i));
      const gx = new Float32Array(n);
      const sig = Float32Array.from(x.data, (v) => 1 / (1 + Math.exp(-v)));
      addon.siluBwd(x.data, sig, g, gx, n);
      for (let i = 0; i < n; i++) {
        const s = sig[i]!;
        const want = g[i]! * s * (1 + x.data[i]! * (1 - s));
        expect(Math.abs(gx[i]! - want)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want)));
      }
      disableNativeTensorKernels();
      expect(gemmName()).not.toBe("native");
    });

    it("copyRows copies row blocks between strided buffers and nothing else", () => {
      const rows = 3001;
      const src = Float32Array.from({ length: rows * 41 + 7 }, (_, i) => i);
      const dst = new Float32Array(rows * 53 + 11).fill(-1);
      addon.setThreads(2);
      addon.copyRows(src, 7, 41, dst, 11, 53, rows, 30);
      addon.setThreads(1);
      for (let i = 0; i < dst.length; i++) {
        const r = Math.floor((i - 11) / 53);
        const j = (i - 11) % 53;
        const inside = i >= 11 && r < rows && j < 30;
        expect(dst[i]).toBe(inside ? src[r * 41 + 7 + j] : -1);
      }
    });

    it("rmsnorm forward and backward equal the portable loops, for 1 and 2 threads", () => {
      for (const [rows, D] of [
        [1, 1],
        [7, 33],
        [1000, 64],
        [301, 257],
      ] as const) {
        const x = Float32Array.from({ length: rows * D }, (_, i) => Math.sin(i * 0.37) * 3);
        const w = Float32Array.from({ length: D }, (_, i) => 1 + 0.1 * Math.cos(i));
        const gy = Float32Array.from({ length: rows * D }, (_, i) => Math.cos(i * 0.11));
        const want = { y: new Float32Array(rows * D), r: new Float32Array(rows) };
        rmsnormRows(x, w, rows, D, 1e-5, want.r, want.y);
        const wgx = new Float32Array(rows * D);
        const wgw = new Float32Array(D);
        rmsnormRowsBackward(x, w, rows, D, want.r, gy, wgx, wgw);
        const results = [1, 2].map((t) => {
          addon.setThreads(t);
          const y = new Float32Array(rows * D);
          const r = new Float32Array(rows);
          addon.rmsnormFwd(x, w, rows, D, 1e-5, r, y);
          const gx = new Float32Array(rows * D);
          const gw = new Float32Array(D).fill(Number.NaN);
          addon.rmsnormBwd(x, w, rows, D, r, gy, gx, gw);
          return { y, r, gx, gw };
        });
        addon.setThreads(1);
        expect(results[1]).toEqual(results[0]);
        const close = (a: Float32Array, b: Float32Array, tol: number) => {
          for (let i = 0; i < a.length; i++)
            expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b[i]!)));
        };
        close(results[0]!.y, want.y, 2e-6);
        close(results[0]!.r, want.r, 2e-6);
        close(results[0]!.gx, wgx, 1e-5);
        close(results[0]!.gw, wgw, 1e-5 * Math.sqrt(rows));
        // gx only / gw only
        const gxOnly = new Float32Array(rows * D);
        addon.rmsnormBwd(x, w, rows, D, results[0]!.r, gy, gxOnly, null);
        expect(gxOnly).toEqual(results[0]!.gx);
      }
    });

    it("binarySame equals the JavaScript arithmetic, in place too, for 1 and 2 threads", () => {
      const n = 300_001;
      const a = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 10);
      const b = Float32Array.from({ length: n }, (_, i) => Math.cos(i * 0.3) + 1.5);
      const ops = [
        (x: number, z: number) => x + z,
        (x: number, z: number) => x - z,
        (x: number, z: number) => x * z,
        (x: number, z: number) => x / z,
      ];
      for (const threads of [1, 2]) {
        addon.setThreads(threads);
        ops.forEach((op, kind) => {
          const y = new Float32Array(n);
          addon.binarySame(kind, a, b, y, n);
          for (let i = 0; i < n; i += 997) expect(y[i]).toBe(Math.fround(op(a[i]!, b[i]!)));
          const inPlace = a.slice();
          addon.binarySame(kind, inPlace, b, inPlace, n);
          expect(inPlace).toEqual(y);
        });
      }
      addon.setThreads(1);
    });

    it("embeddingBwd equals the portable scatter-add bit for bit (repeated ids), 1–3 threads", () => {
      const [V, D, n] = [37, 130, 2000]; // D not a multiple of the vector width or thread count
      const ids = Int32Array.from({ length: n }, (_, i) => (i * i + 3 * i) % V);
      const g = Float32Array.from({ length: n * D }, (_, i) => Math.sin(i * 0.7) * 3);
      const base = Float32Array.from({ length: V * D }, (_, i) => Math.cos(i)); // adds onto it
      const want = base.slice();
      embeddingBwd(ids, g, want, n, D);
      for (const threads of [1, 2, 3]) {
        addon.setThreads(threads);
        const got = base.slice();
        addon.embeddingBwd(ids, g, got, n, D);
        expect(got).toEqual(want);
      }
      addon.setThreads(1);
    });

    it("ceFwd / ceBwd equal the portable cross-entropy loops, ignored rows untouched", () => {
      const rows = 997;
      const V = 77;
      const x = Float32Array.from({ length: rows * V }, (_, i) => Math.sin(i * 0.37) * 9);
      const t = Int32Array.from({ length: rows }, (_, r) => (r % 13 === 5 ? -100 : (r * 7) % V));
      const g = Float32Array.from({ length: rows }, (_, r) => (r % 17 === 3 ? 0 : Math.cos(r)));
      const lse = new Float64Array(rows);
      const y = new Float32Array(rows);
      ceForward({ x, t, lse, y, V, ignore: -100 }); // (portable: no native kernel is registered here)
      const gx = new Float32Array(rows * V);
      ceBackward({ x, t, lse, g, gx, V, ignore: -100 });
      for (const threads of [1, 2]) {
        addon.setThreads(threads);
        const nl = new Float64Array(rows).fill(7);
        const ny = new Float32Array(rows).fill(7);
        addon.ceFwd(x, t, nl, ny, rows, V, -100);
        const ngx = new Float32Array(rows * V);
        addon.ceBwd(x, t, nl, g, ngx, rows, V, -100);
        for (let r = 0; r < rows; r++) {
          if (t[r] === -100) {
            expect([nl[r], ny[r]]).toEqual([7, 7]);
            continue;
          }
          expect(Math.abs(nl[r]! - lse[r]!)).toBeLessThan(1e-6 * Math.max(1, Math.abs(lse[r]!)));
          expect(Math.abs(ny[r]! - y[r]!)).toBeLessThan(1e-5 * Math.max(1, Math.abs(y[r]!)));
        }
        for (let i = 0; i < gx.length; i++)
          expect(Math.abs(ngx[i]! - gx[i]!)).toBeLessThan(1e-6 * Math.max(1, Math.abs(gx[i]!)));
      }
      addon.setThreads(1);
    });

    it("AdamW on the native update gives the portable loop's bits, on any thread count", async () => {
      const n = 300_007; // above the kernel's parallel threshold, odd
      const run = () => {
        const mk = (decay: boolean, k: number) => {
          const t = new Tensor(
            Float32Array.from({ length: n }, (_, i) => Math.sin(i * k)),
            [n],
          );
          t.requiresGrad = true;
          return { name: `p${k}`, tensor: t, decay };
        };
        const params = [mk(true, 0.3), mk(false, 0.7)];
        const opt = new AdamW(params, { lr: 3e-3, weightDecay: 0.1 });
        for (let step = 1; step <= 3; step++) {
          for (const p of params)
            p.tensor.grad = Float32Array.from({ length: n }, (_, i) => Math.cos(i * step) * 1e-2);
          opt.step();
        }
        return { w: params.map((p) => p.tensor.data), state: opt.getState() };
      };
      const portable = run();
      expect((await enableNativeTensorKernels()).ok).toBe(true);
      try {
        expect(nativeKernelNames()).toContain("tensor/adamw");
        const native = run();
        expect(native.w).toEqual(portable.w);
        expect(native.state).toEqual(portable.state);
      } finally {
        disableNativeTensorKernels();
      }
      const one = () => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.1));
      const out = [1, 2].map((threads) => {
        addon.setThreads(threads);
        const [w, m, v] = [one(), one(), one().map(Math.abs)];
        addon.adamw(w, one(), m, v, n, 0.999, 1e-3, 0.9, 0.999, 1e-8, 1.3);
        return [w, m, v];
      });
      expect(out[1]).toEqual(out[0]);
      addon.setThreads(1);
    });

    it("siluRowsFwd / siluRowsBwd equal the portable column-block loops, for 1 and 2 threads", () => {
      const rows = 2001;
      const W = 45;
      const x = Float32Array.from({ length: rows * W }, (_, i) => Math.sin(i * 0.7) * 12);
      const g = Float32Array.from({ length: rows * 20 }, (_, i) => Math.cos(i));
      const want = new Float32Array(rows * 20);
      siluRowsFwd(x, 13, W, want, rows, 20);
      const wantGx = new Float32Array(rows * W).fill(5);
      siluRowsBwd(x, 13, W, g, wantGx, rows, 20);
      siluRowsBwd(x, 33, W, null, wantGx, rows, 12);
      for (const threads of [1, 2]) {
        addon.setThreads(threads);
        const y = new Float32Array(rows * 20);
        addon.siluRowsFwd(x, 13, W, y, rows, 20);
        const gx = new Float32Array(rows * W).fill(5);
        addon.siluRowsBwd(x, 13, W, g, gx, rows, 20);
        addon.siluRowsBwd(x, 33, W, null, gx, rows, 12);
        for (let i = 0; i < y.length; i++)
          expect(Math.abs(y[i]! - want[i]!)).toBeLessThanOrEqual(
            2e-7 * Math.max(1, Math.abs(want[i]!)),
          );
        for (let i = 0; i < gx.length; i++)
          expect(Math.abs(gx[i]! - wantGx[i]!)).toBeLessThanOrEqual(
            1e-6 * Math.max(1, Math.abs(wantGx[i]!)),
          );
      }
      addon.setThreads(1);
    });
  },
);

describe.runIf(nativeSuiteRuns("a native addon lacking a kernel", built))(
  "a native addon lacking a kernel of its group",
  () => {
    it("is refused with the kernel's name, and registers nothing", async () => {
      const dir = mkdtempSync(join(tmpdir(), "looplm-partial-addon-"));
      const source = join(dir, "partial.c");
      // exports setThreads and siluFwd only: every other kernel of the tensor set is missing
      writeFileSync(
        source,
        `#include "napi-args.h"
static napi_value Nothing(napi_env env, napi_callback_info info) { (void)env; (void)info; return NULL; }
NAPI_MODULE_INIT() {
  loop_export(env, exports, "setThreads", Nothing);
  loop_export(env, exports, "siluFwd", Nothing);
  return exports;
}
`,
      );
      const r = await enableNativeAddons([{ group: "tensor", source, kernels: TENSOR_KERNELS }]);
      expect(r).toEqual({ ok: false, error: `${source} does not export the kernel sgemm` });
      expect(kernelSet("tensor")).toBeUndefined();
    });
  },
);
