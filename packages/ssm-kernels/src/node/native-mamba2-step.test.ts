/**
 * native/mamba2-step.c against the portable step it replaces (mamba2-step.ts, the reference):
 * Mamba2Mixer.step and .absorb on odd shapes (sizes that are not multiples of the kernel's 8
 * lanes or 8-row blocks, two groups, no conv state), from random states over several tokens.
 * Native must match portable to float32 rounding (outputs and both states), 1- and 2-thread
 * results must be bitwise identical (the kernel runs on the calling thread whatever the addon's
 * thread count), each row of a batch must get the bits it gets stepped alone, and T native steps must match the chunked
 * forward over the same T tokens.
 */
import { Rng, Tensor } from "@loop/tensor";
import { registerKernelSet } from "@loop/tensor/kernel";
import { buildNativeAddon } from "@loop/tensor/node";
import { itBuildsNativeAddon, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { relErr } from "../helpers.test-util.js";
import type { Mamba2Config } from "../mamba2-config.js";
import { Mamba2Mixer, type Mamba2State } from "../mamba2-mixer.js";
import type { Mamba2StepNative } from "../mamba2-step.js";
import type { Mamba2StepKernelSet } from "../native-kernel-sets.js";
import { ssmNativeSource } from "./index.js";

interface StepAddon {
  step: Mamba2StepNative;
  setThreads: (n: number) => void;
}

const built = await buildNativeAddon<StepAddon>("mamba2Step", ssmNativeSource("mamba2-step"));

interface Case {
  name: string;
  cfg: Mamba2Config;
  batch: number;
}

const cfg = (
  dModel: number,
  headdim: number,
  dState: number,
  nGroups: number,
  dConv: number,
): Mamba2Config => ({
  dModel,
  dState,
  headdim,
  expand: 2,
  nGroups,
  dConv,
  chunkSize: 4,
  normEps: 1e-5,
});

const CASES: Case[] = [
  { name: "odd sizes, 2 groups", cfg: cfg(20, 10, 12, 2, 4), batch: 3 },
  // HF's time_step_limit on both sides of the steps these weights give; the norm over all of Di
  {
    name: "clamped dt, whole-Di norm, 2 groups",
    cfg: { ...cfg(20, 10, 12, 2, 4), dtLimit: [0.02, 0.08], normGroups: 1 },
    batch: 3,
  },
  { name: "no conv state (d_conv 1)", cfg: cfg(24, 12, 8, 1, 1), batch: 2 },
  { name: "batch 1", cfg: cfg(36, 18, 20, 1, 3), batch: 1 },
  // the width of a real model, batch 8 (in_proj rows in blocks of 8, inputs in pairs)
  { name: "wide, batch 8", cfg: cfg(192, 48, 36, 1, 4), batch: 8 },
];

/** A mixer with non-trivial D, norm weight, conv bias and dt bias (init leaves some at 1 / 0). */
function mixer(c: Mamba2Config, seed: number): Mamba2Mixer {
  const m = new Mamba2Mixer(c, { rng: new Rng(seed), nLayers: 2 });
  const rng = new Rng(seed + 1);
  for (const t of [m.d, m.normWeight, m.convBias, m.dtBias])
    for (let i = 0; i < t.size; i++) t.data[i] = t.data[i]! + rng.uniformIn(-0.5, 0.5);
  return m;
}

function randomState(m: Mamba2Mixer, batch: number, seed: number): Mamba2State {
  const st = m.initState(batch);
  const rng = new Rng(seed);
  for (const a of [st.conv, st.ssm]) for (let i = 0; i < a.length; i++) a[i] = rng.normal();
  return st;
}

function inputs(batch: number, T: number, D: number, seed: number): Float32Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: T }, () => {
    const u = new Float32Array(batch * D);
    for (let i = 0; i < u.length; i++) u[i] = rng.normal();
    return u;
  });
}

interface Run {
  out: Float32Array;
  conv: Float32Array;
  ssm: Float32Array;
}

/** T steps of m from `st0` (copied): the outputs of every step, then the final states. */
function stepRun(m: Mamba2Mixer, st0: Mamba2State, us: Float32Array[]): Run {
  const st = { conv: st0.conv.slice(), ssm: st0.ssm.slice(), batch: st0.batch };
  const D = m.cfg.dModel;
  const out = new Float32Array(us.length * st.batch * D);
  us.forEach((u, t) => {
    out.set(m.step(st, new Tensor(u, [st.batch, D])).data, t * st.batch * D);
  });
  return { out, conv: st.conv, ssm: st.ssm };
}

function sameBits(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

describe("mamba2Step native addon", () => {
  itBuildsNativeAddon("mamba2Step", built, "Mamba-2 step");
});

describe.runIf(nativeSuiteRuns("native Mamba-2 step", built))(
  "the native Mamba-2 step matches the portable one",
  () => {
    const addon = (built as { addon: StepAddon }).addon;
    // (read when a test runs: vitest also collects a skipped suite, where there is no addon)
    const fns: Mamba2StepKernelSet = { step: (...args) => addon.step(...args) };
    afterAll(() => {
      registerKernelSet("mamba2Step", null);
      addon.setThreads(1);
    });

    /** f with the portable loops, then with the native kernel on 1 and on 2 threads. */
    function run<T>(f: () => T): { ref: T; one: T; two: T } {
      registerKernelSet("mamba2Step", null);
      const ref = f();
      registerKernelSet("mamba2Step", fns);
      try {
        addon.setThreads(1);
        const one = f();
        addon.setThreads(2);
        const two = f();
        return { ref, one, two };
      } finally {
        registerKernelSet("mamba2Step", null);
        addon.setThreads(1);
      }
    }

    for (const [ci, c] of CASES.entries()) {
      it(`step: ${c.name}`, () => {
        const m = mixer(c.cfg, 10 + ci);
        const st = randomState(m, c.batch, 20 + ci);
        const us = inputs(c.batch, 3, c.cfg.dModel, 30 + ci);
        const r = run(() => stepRun(m, st, us));
        for (const k of ["out", "conv", "ssm"] as const) {
          expect(relErr(r.one[k], r.ref[k]), `${c.name} ${k}`).toBeLessThan(2e-5);
          expect(sameBits(r.one[k], r.two[k]), `${c.name} ${k}: 1 vs 2 threads`).toBe(true);
        }
      });
    }

    for (const [ci, c] of CASES.entries()) {
      it(`stepResidual (h + step(rmsnorm(h))): ${c.name}`, () => {
        const m = mixer(c.cfg, 100 + ci);
        const st0 = randomState(m, c.batch, 110 + ci);
        const hs = inputs(c.batch, 3, c.cfg.dModel, 120 + ci);
        const rng = new Rng(130 + ci);
        const normW = new Tensor(new Float32Array(c.cfg.dModel), [c.cfg.dModel]);
        for (let i = 0; i < normW.size; i++) normW.data[i] = 1 + rng.uniformIn(-0.5, 0.5);
        const r = run(() => {
          const st = { conv: st0.conv.slice(), ssm: st0.ssm.slice(), batch: c.batch };
          const out = new Float32Array(hs.length * c.batch * c.cfg.dModel);
          hs.forEach((h, t) => {
            const y = m.stepResidual(st, new Tensor(h, [c.batch, c.cfg.dModel]), normW, 1e-5);
            out.set(y.data, t * h.length);
          });
          return { out, conv: st.conv, ssm: st.ssm };
        });
        for (const k of ["out", "conv", "ssm"] as const) {
          expect(relErr(r.one[k], r.ref[k]), `${c.name} ${k}`).toBeLessThan(2e-5);
          expect(sameBits(r.one[k], r.two[k]), `${c.name} ${k}: 1 vs 2 threads`).toBe(true);
        }
      });
    }

    it("each row of a batch gets the bits it gets stepped alone", () => {
      const c = CASES[0]!;
      const m = mixer(c.cfg, 40);
      const st = randomState(m, c.batch, 41);
      const us = inputs(c.batch, 2, c.cfg.dModel, 42);
      const D = c.cfg.dModel;
      registerKernelSet("mamba2Step", fns);
      try {
        const all = stepRun(m, st, us);
        for (let b = 0; b < c.batch; b++) {
          const row = <T extends Float32Array>(a: T, n: number) => a.slice(b * n, (b + 1) * n);
          const nConv = st.conv.length / c.batch;
          const nSsm = st.ssm.length / c.batch;
          const alone = stepRun(
            m,
            { conv: row(st.conv, nConv), ssm: row(st.ssm, nSsm), batch: 1 },
            us.map((u) => row(u, D)),
          );
          const outs = us.map((_, t) =>
            all.out.subarray((t * c.batch + b) * D, (t * c.batch + b + 1) * D),
          );
          for (const [t, o] of outs.entries())
            expect(sameBits(o, alone.out.subarray(t * D, (t + 1) * D)), `row ${b} token ${t}`).toBe(
              true,
            );
          expect(sameBits(row(all.ssm, nSsm), alone.ssm), `row ${b} ssm`).toBe(true);
          expect(sameBits(row(all.conv, nConv), alone.conv), `row ${b} conv`).toBe(true);
        }
      } finally {
        registerKernelSet("mamba2Step", null);
      }
    });

    it("absorb: the state update of the selected rows alone", () => {
      for (const [ci, c] of CASES.entries()) {
        if (c.batch < 2) continue;
        const m = mixer(c.cfg, 50 + ci);
        const st = randomState(m, c.batch, 60 + ci);
        const rows = [0, c.batch - 1];
        const u = inputs(rows.length, 1, c.cfg.dModel, 70 + ci)[0]!;
        const r = run(() => {
          const s = { conv: st.conv.slice(), ssm: st.ssm.slice(), batch: st.batch };
          m.absorb(s, new Tensor(u, [rows.length, c.cfg.dModel]), rows);
          return s;
        });
        for (const k of ["conv", "ssm"] as const) {
          expect(relErr(r.one[k], r.ref[k]), `${c.name} ${k}`).toBeLessThan(2e-5);
          expect(sameBits(r.one[k], r.two[k]), `${c.name} ${k}: 1 vs 2 threads`).toBe(true);
        }
        // the rows not selected are untouched
        const nSsm = st.ssm.length / c.batch;
        for (let b = 1; b < c.batch - 1; b++)
          expect(
            sameBits(
              r.one.ssm.subarray(b * nSsm, (b + 1) * nSsm),
              st.ssm.subarray(b * nSsm, (b + 1) * nSsm),
            ),
          ).toBe(true);
      }
    });

    it("T native steps match the chunked forward over the same tokens", () => {
      const c = CASES[0]!;
      const m = mixer(c.cfg, 80);
      const T = 9;
      const D = c.cfg.dModel;
      const us = inputs(c.batch, T, D, 81);
      const x = new Float32Array(c.batch * T * D); // [B,T,D] from T tokens of [B,D]
      us.forEach((u, t) => {
        for (let b = 0; b < c.batch; b++) x.set(u.subarray(b * D, (b + 1) * D), (b * T + t) * D);
      });
      const full = m.forward(new Tensor(x, [c.batch, T, D])).data;
      registerKernelSet("mamba2Step", fns);
      try {
        const steps = stepRun(m, m.initState(c.batch), us).out;
        const want = new Float32Array(steps.length);
        us.forEach((_, t) => {
          for (let b = 0; b < c.batch; b++)
            want.set(full.subarray((b * T + t) * D, (b * T + t + 1) * D), (t * c.batch + b) * D);
        });
        expect(relErr(steps, want)).toBeLessThan(1e-4);
      } finally {
        registerKernelSet("mamba2Step", null);
      }
    });

    it("rejects wrong arrays instead of reading past them", () => {
      const c = CASES[0]!;
      const m = mixer(c.cfg, 90);
      const st = m.initState(c.batch);
      const u = new Tensor(new Float32Array(c.batch * c.cfg.dModel), [c.batch, c.cfg.dModel]);
      const { dModel: D, headdim: P, dState: N, nGroups: G, dConv: K, normEps } = c.cfg;
      const call = (rows: Int32Array | null, out: Float32Array | null, ssm = st.ssm) =>
        addon.step(
          c.batch,
          c.batch,
          D,
          P,
          N,
          G,
          K,
          m.dInner,
          normEps,
          u.data,
          m.inProj.data,
          m.convWeight.data,
          m.convBias.data,
          m.dtBias.data,
          m.aLog.data,
          m.d.data,
          m.normWeight.data,
          m.outProj.data,
          st.conv,
          ssm,
          rows,
          out,
          null,
          0,
          0,
          Number.POSITIVE_INFINITY,
          G,
        );
      expect(() => call(null, new Float32Array(c.batch * D), st.ssm.subarray(1))).toThrow(
        /ssm state holds/,
      );
      expect(() => call(Int32Array.of(0, 0, 1), null)).toThrow(/distinct state rows/);
      expect(() => call(Int32Array.of(0, 1, 3), null)).toThrow(/distinct state rows/);
      expect(() => call(null, new Float32Array(2))).toThrow(/out holds/);
    });
  },
);
