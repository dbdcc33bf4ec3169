import { backward, Rng, releaseScratch, type Tensor, withScratch } from "@loop/tensor";
import { randu } from "@loop/tensor/internal";
import { allocF32Uninit, nativeKernelNames, registerKernelSet } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { itBuildsNativeAddon, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { relErr, type ScanInputs, scanInputs } from "../helpers.test-util.js";
import type { SsdKernelSet } from "../native-kernel-sets.js";
import type {
  SsdBackwardGroupsNative,
  SsdBackwardHeadsNative,
} from "../ssd-chunked-backward-native.js";
import type { SsdForwardNative } from "../ssd-chunked-forward.js";
import { ssdScanChunked } from "../ssd-scan-chunked.js";
import { ssdScanRef } from "../ssd-scan-ref.js";
import { disableNativeSsmKernels, enableNativeSsmKernels, ssmNativeSource } from "./index.js";

/** What native/ssd.c exports. */
interface SsdAddon {
  forward: SsdForwardNative;
  backwardHeads: SsdBackwardHeadsNative;
  backwardGroups: SsdBackwardGroupsNative;
  setThreads: (n: number) => void;
}

const built = await buildNativeAddon<SsdAddon>("ssd", ssmNativeSource("ssd"));

describe("native ssd addon build", () => {
  itBuildsNativeAddon("ssd", built);
});

type Dims = { batch: number; T: number; H: number; P: number; G: number; N: number };
/** Which output gradients the loss sends back: y only, final state only, or both. */
type Seeds = "y" | "state" | "both";

function leaves(inp: ScanInputs, D: Tensor | null = null) {
  const l = inp.s0
    ? [inp.x, inp.dt, inp.A, inp.B, inp.C, inp.s0]
    : [inp.x, inp.dt, inp.A, inp.B, inp.C];
  return D ? [...l, D] : l;
}

/**
 * y, final state and every input gradient of Σ y⊙gy + Σ state⊙gs, computed inside a scratch
 * scope whose pool holds NaN-filled buffers (the native passes take their outputs unzeroed from
 * the pool, so an element they fail to write shows as NaN), copied out before the scope ends.
 */
function run(
  inp: ScanInputs,
  chunk: number,
  seeds: Seeds,
  reference = false,
  D: Tensor | null = null,
): Float32Array[] {
  withScratch(() => {
    for (let b = 10; b <= 22; b++)
      for (let i = 0; i < 6; i++) allocF32Uninit(2 ** b).fill(Number.NaN);
  });
  return withScratch(() => runScoped(inp, chunk, seeds, reference, D));
}

/** (D: the fused D skip; the sequential reference has none) */
function runScoped(
  inp: ScanInputs,
  chunk: number,
  seeds: Seeds,
  reference: boolean,
  D: Tensor | null,
) {
  for (const t of leaves(inp, D)) t.grad = null;
  const opts = { initialState: inp.s0, chunkSize: chunk, D };
  const { y, state } = reference
    ? ssdScanRef(inp.x, inp.dt, inp.A, inp.B, inp.C, opts)
    : ssdScanChunked(inp.x, inp.dt, inp.A, inp.B, inp.C, opts);
  const rng = new Rng(chunk + 17);
  const gy = rng.fillUniform(new Float32Array(y.size), -1, 1);
  const gs = rng.fillUniform(new Float32Array(state.size), -1, 1);
  if (seeds === "y") backward(y, [gy]);
  else if (seeds === "state") backward(state, [gs]);
  else backward([y, state], [gy, gs]);
  return [y.data, state.data, ...leaves(inp, D).map((t) => t.grad!)].map((a) =>
    Float32Array.from(a),
  );
}

const NAMES = ["y", "state", "dx", "ddt", "dA", "dB", "dC", "ds0 or dD", "dD"];

interface Case {
  dims: Dims;
  chunk: number;
  s0: boolean;
  seeds: Seeds;
  /** with the fused D skip */
  D?: boolean;
}

const CASES: Case[] = [
  { dims: { batch: 2, T: 37, H: 4, P: 5, G: 1, N: 6 }, chunk: 8, s0: false, seeds: "both" },
  { dims: { batch: 2, T: 37, H: 4, P: 5, G: 2, N: 6 }, chunk: 8, s0: true, seeds: "both" },
  { dims: { batch: 2, T: 37, H: 4, P: 5, G: 2, N: 6 }, chunk: 8, s0: true, seeds: "both", D: true },
  { dims: { batch: 2, T: 37, H: 4, P: 5, G: 2, N: 6 }, chunk: 3, s0: true, seeds: "y" },
  {
    dims: { batch: 1, T: 11, H: 2, P: 3, G: 1, N: 4 },
    chunk: 4,
    s0: false,
    seeds: "state",
    D: true,
  },
  { dims: { batch: 1, T: 11, H: 2, P: 3, G: 1, N: 4 }, chunk: 1, s0: true, seeds: "state" },
  { dims: { batch: 1, T: 5, H: 2, P: 3, G: 1, N: 4 }, chunk: 16, s0: true, seeds: "both" },
  { dims: { batch: 3, T: 45, H: 6, P: 17, G: 2, N: 19 }, chunk: 16, s0: true, seeds: "both" },
  { dims: { batch: 3, T: 45, H: 6, P: 17, G: 3, N: 19 }, chunk: 16, s0: false, seeds: "state" },
  // large enough for the OpenMP loops to run on 2 threads
  { dims: { batch: 2, T: 130, H: 4, P: 33, G: 1, N: 40 }, chunk: 64, s0: false, seeds: "both" },
  { dims: { batch: 3, T: 100, H: 4, P: 24, G: 2, N: 20 }, chunk: 32, s0: true, seeds: "y" },
  { dims: { batch: 2, T: 70, H: 2, P: 64, G: 1, N: 64 }, chunk: 64, s0: true, seeds: "both" },
  {
    dims: { batch: 2, T: 130, H: 4, P: 33, G: 1, N: 40 },
    chunk: 64,
    s0: false,
    seeds: "both",
    D: true,
  },
];

const label = (c: Case) =>
  `${JSON.stringify(c.dims)} chunk ${c.chunk}, s0 ${c.s0}, gradient of ${c.seeds}${c.D ? ", D skip" : ""}`;

describe.runIf(nativeSuiteRuns("native chunked SSD", built))(
  "native chunked SSD matches the portable passes",
  () => {
    const addon = (built as { addon: SsdAddon }).addon;
    /** Calls of each native function, to be sure the native passes really ran. */
    const calls: Record<string, number> = {};
    // the raw functions (counted), so setThreads below is not overridden by the thread-pool sync
    // (vitest also collects a skipped suite, where there is no addon: nothing to count then)
    const counted = Object.fromEntries(
      Object.entries(addon ?? {}).map(([name, f]) => [
        name,
        (...args: unknown[]) => {
          calls[name] = (calls[name] ?? 0) + 1;
          return (f as (...a: unknown[]) => unknown)(...args);
        },
      ]),
    ) as unknown as SsdKernelSet;
    const useNative = () => registerKernelSet("ssd", counted);
    const usePortable = () => registerKernelSet("ssd", null);
    afterEach(() => {
      usePortable();
      addon.setThreads(1);
    });
    afterAll(() => releaseScratch());

    CASES.forEach((c, k) => {
      it(`forward outputs and every gradient agree, 1 and 2 threads identical: ${label(c)}`, () => {
        const inp = scanInputs(c.dims, 300 + 7 * k, c.s0);
        const D = c.D ? randu([c.dims.H], 400 + k, 0.5, 1.5) : null;
        usePortable();
        const want = run(inp, c.chunk, c.seeds, false, D);
        useNative();
        addon.setThreads(1);
        const one = run(inp, c.chunk, c.seeds, false, D);
        addon.setThreads(2);
        const before = { ...calls };
        const two = run(inp, c.chunk, c.seeds, false, D);
        for (const f of ["forward", "backwardHeads", "backwardGroups"])
          expect(calls[f], f).toBe((before[f] ?? 0) + 1);
        one.forEach((g, i) => {
          expect(relErr(g, want[i]!), NAMES[i]).toBeLessThan(1e-5);
          expect(two[i], `${NAMES[i]}: 2 threads`).toEqual(g);
        });
      });
    });

    it("agrees with the sequential reference scan", () => {
      for (const G of [1, 2]) {
        const inp = scanInputs({ batch: 2, T: 53, H: 4, P: 7, G, N: 9 }, 900 + G, G === 2);
        const want = run(inp, 16, "both", true);
        useNative();
        addon.setThreads(2);
        const got = run(inp, 16, "both");
        usePortable();
        got.forEach((g, i) => {
          expect(relErr(g, want[i]!), `${NAMES[i]} (G=${G})`).toBeLessThan(1e-5);
        });
      }
    });

    it("writes every output element (outputs prefilled with NaN give the same results)", () => {
      const [batch, T, H, P, G, N, Lc] = [2, 45, 4, 17, 2, 16, 16];
      const nc = Math.ceil(T / Lc);
      const rng = new Rng(31);
      const u = (n: number, lo = -1, hi = 1) => rng.fillUniform(new Float32Array(n), lo, hi);
      const [x, gy] = [u(batch * T * H * P), u(batch * T * H * P)];
      const [dt, A] = [u(batch * T * H, 0.01, 0.5), u(H, -3, -0.2)];
      const [B, C] = [u(batch * T * G * N), u(batch * T * G * N)];
      const [s0, gs] = [u(batch * H * P * N), u(batch * H * P * N)];
      const Dv = u(H, 0.5, 1.5); // (with the fused D skip: its outputs are checked too)
      const sizes = [batch, T, H, P, G, N, Lc] as const;
      const runRaw = (fill: number) => {
        const f = (n: number) => new Float32Array(n).fill(fill);
        const o = {
          y: f(x.length),
          state: f(s0.length),
          cb: f(batch * nc * G * Lc * Lc),
          cs: f(batch * H * nc * P * N),
          gx: f(x.length),
          gdt: f(dt.length),
          gA: f(H),
          gs0: f(s0.length),
          gBh: f(batch * T * H * N),
          gCh: f(batch * T * H * N),
          dCB: f((batch * nc * H * Lc * (Lc + 1)) / 2),
          gD: f(H),
          gB: f(B.length),
          gC: f(C.length),
        };
        addon.forward(x, dt, A, B, C, s0, o.y, o.state, o.cb, o.cs, Dv, ...sizes);
        addon.backwardHeads(
          ...([x, dt, A, B, C, true, gy, gs, o.cs, o.cb, o.gx, o.gdt, o.gA, o.gs0] as const),
          ...([o.gBh, o.gCh, o.dCB, Dv, o.gD, ...sizes] as const),
        );
        addon.backwardGroups(B, C, o.gBh, o.gCh, o.dCB, o.gB, o.gC, ...sizes);
        // cb holds the lower triangle of each chunk's L×L block only (the passes read nothing else)
        for (let blk = 0; blk < batch * nc * G; blk++) {
          const L = Math.min(Lc, T - (Math.floor(blk / G) % nc) * Lc);
          for (let i = 0; i < Lc; i++)
            for (let j = 0; j < Lc; j++) if (j > i || i >= L) o.cb[(blk * Lc + i) * Lc + j] = 0;
        }
        const { dCB: _scratch, ...checked } = o;
        return checked;
      };
      const clean = runRaw(0);
      const dirty = runRaw(Number.NaN);
      for (const [name, v] of Object.entries(clean)) {
        expect(v.some(Number.isNaN), name).toBe(false);
        expect(dirty[name as keyof typeof dirty], name).toEqual(v);
      }
    });

    it("throws on a short array instead of reading past it", () => {
      const f = new Float32Array(10);
      expect(() =>
        addon.forward(f, f, f, f, f, null, f, f, f, null, null, 1, 10, 1, 2, 1, 2, 4),
      ).toThrow(/holds 10 values, needs 20/);
      expect(() =>
        addon.forward(f, f, f, f, f, null, f, f, f, null, null, 1, 10, 3, 1, 2, 1, 4),
      ).toThrow(/invalid sizes/);
    });

    it("enableNativeSsmKernels registers the scan under ssd/", async () => {
      // (also builds native/ssm.c: this suite runs only where ssd.c built, so that must too)
      const r = await enableNativeSsmKernels();
      expect(r.ok ? "built" : r.error).toBe("built");
      expect(nativeKernelNames()).toEqual(
        expect.arrayContaining(["ssd/forward", "ssd/backwardHeads", "ssd/backwardGroups"]),
      );
      disableNativeSsmKernels();
      expect(nativeKernelNames().filter((n) => n.startsWith("ssd/"))).toEqual([]);
    });
  },
);
