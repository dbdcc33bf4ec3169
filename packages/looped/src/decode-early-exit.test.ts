import { type AttentionMixer, KvCache, ropeInPlace } from "@loop/attention";
import type { Mamba2State } from "@loop/ssm-kernels";
import { linear, noGrad, rmsnorm, tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { type DecodeState, decodeStep, initDecodeState } from "./decode.js";
import { decodeStepEarlyExit } from "./decode-early-exit.js";
import { configs, gatedModel, R } from "./helpers.test-util.js";
import { LoopedModel } from "./model.js";

const seqs = [
  [1, 4, 2, 9, 0, 3, 3, 7],
  [10, 5, 6, 2, 8, 1, 1, 4],
  [3, 3, 0, 7, 9, 2, 5, 6],
];
const T = seqs[0]!.length;
const column = (t: number, rows = seqs) => rows.map((s) => s[t]!);

/** The built-in mixers' decoding states (the layers of these tests). */
type LayerState = Mamba2State | KvCache;

function cloneLayerState(s: LayerState): LayerState {
  if (!(s instanceof KvCache)) return { ...s, conv: s.conv.slice(), ssm: s.ssm.slice() };
  const c = new KvCache(s.batch, s.capacity, s.nKvHeads, s.headDim);
  c.k.set(s.k);
  c.v.set(s.v);
  c.length = s.length;
  return c;
}

function cloneState(st: DecodeState): DecodeState {
  return {
    ...st,
    states: st.states.map((row) => row.map((s) => cloneLayerState(s as LayerState))),
  };
}

function expectSameStates(a: DecodeState, b: DecodeState): void {
  expect(a.position).toBe(b.position);
  a.states.forEach((row, r) => {
    row.forEach((x, i) => {
      const s = x as LayerState;
      const o = b.states[r]![i]! as LayerState;
      if (!(s instanceof KvCache) && !(o instanceof KvCache)) {
        expect(s.conv).toEqual(o.conv);
        expect(s.ssm).toEqual(o.ssm);
      } else if (s instanceof KvCache && o instanceof KvCache) {
        expect(s.length).toBe(o.length);
        expect(s.k).toEqual(o.k);
        expect(s.v).toEqual(o.v);
      } else throw new Error(`state kinds differ at step ${r}, layer ${i}`);
    });
  });
}

/** Row b's slice of a layer state (every field), for row-wise comparisons. */
function rowOf(x: unknown, b: number): Float32Array[] {
  const s = x as LayerState;
  if (!(s instanceof KvCache)) {
    const cs = s.conv.length / s.batch;
    const ss = s.ssm.length / s.batch;
    return [s.conv.slice(b * cs, (b + 1) * cs), s.ssm.slice(b * ss, (b + 1) * ss)];
  }
  const n = s.k.length / s.batch;
  return [s.k.slice(b * n, (b + 1) * n), s.v.slice(b * n, (b + 1) * n)];
}

/** The exit rule computed from the whole exit pdf: first n with Σ_{r≤n} p(r) ≥ q, else R. */
function referenceExit(gateLogits: number[], q: number): number {
  let survive = 1;
  let cdf = 0;
  for (let r = 0; r < R - 1; r++) {
    const lam = 1 / (1 + Math.exp(-gateLogits[r]!));
    cdf += lam * survive;
    survive *= 1 - lam;
    if (cdf >= q) return r + 1;
  }
  return R;
}

describe.each(Object.entries(configs))("decodeStepEarlyExit (%s)", (_name, cfg) => {
  const N = cfg.n_layers;
  const nAttn = cfg.backbone === "transformer" ? N : cfg.attn_layers.length;

  it("q = 1 reproduces full decoding exactly: logits(R), every state, counts", () => {
    const m = gatedModel(cfg, 3);
    const full = initDecodeState(m, 3, T);
    const early = initDecodeState(m, 3, T);
    for (let t = 0; t < T; t++) {
      const want = decodeStep(m, full, column(t), false).logits[0]!;
      const got = decodeStepEarlyExit(m, early, column(t), { q: 1 });
      expect(got.logits.shape).toEqual([3, 11]);
      expect(got.logits.data).toEqual(want.data);
      expect(Array.from(got.exitSteps)).toEqual([R, R, R]);
      expect(got).toMatchObject({ tokens: 3, layersRun: 3 * R * N, layersSkipped: 0 });
      expect(got.kvPropagated + got.ssmPropagated).toBe(0);
      expectSameStates(early, full);
    }
  });

  it("q = 0 runs one loop step per token; later steps' states never change", () => {
    const m = gatedModel(cfg, 4);
    const st = initDecodeState(m, 2, T);
    const before = cloneState(st);
    for (let t = 0; t < T; t++) {
      const res = decodeStepEarlyExit(m, st, column(t, seqs.slice(0, 2)), { q: 0 });
      expect(Array.from(res.exitSteps)).toEqual([1, 1]);
      expect(res.layersRun).toBe(2 * N);
      expect(res.layersSkipped).toBe(2 * (R - 1) * N);
      expect(res.kvPropagated).toBe(2 * (R - 1) * nAttn);
    }
    for (let r = 1; r < R; r++)
      st.states[r]!.forEach((s, i) => {
        const o = before.states[r]![i]!;
        if (!(s instanceof KvCache))
          expect(rowOf(s, 0).concat(rowOf(s, 1))).toEqual(rowOf(o, 0).concat(rowOf(o, 1)));
        else expect(s.length).toBe(T);
      });
  });

  it("the first token's exit step and logits are those of threshold exit on full decoding", () => {
    const m = gatedModel(cfg, 5);
    const g = m.exitGate!;
    for (const q of [0.3, 0.5, 0.8, 0.95]) {
      const full = decodeStep(m, initDecodeState(m, 3, 1), column(0));
      const got = decodeStepEarlyExit(m, initDecodeState(m, 3, 1), column(0), { q });
      for (let b = 0; b < 3; b++) {
        const a = full.readouts.map((ro) => {
          let s = g.bias.data[0]!;
          for (let d = 0; d < 16; d++) s += g.weight.data[d]! * ro.data[b * 16 + d]!;
          return s;
        });
        const z = referenceExit(a, q);
        expect(got.exitSteps[b]).toBe(z);
        const want = full.logits[z - 1]!.data.subarray(b * 11, (b + 1) * 11);
        expect(got.logits.data.subarray(b * 11, (b + 1) * 11)).toEqual(want);
      }
    }
  });

  it("rows exit independently: a batch gives each row what batch-1 decoding gives it", () => {
    const m = gatedModel(cfg, 6);
    const q = 0.6;
    const st = initDecodeState(m, 3, T);
    const singles = seqs.map(() => initDecodeState(m, 1, T));
    const seen = new Set<string>();
    let run = 0;
    for (let t = 0; t < T; t++) {
      const res = decodeStepEarlyExit(m, st, column(t), { q });
      let zSum = 0;
      seqs.forEach((s, b) => {
        const one = decodeStepEarlyExit(m, singles[b]!, [s[t]!], { q });
        expect(res.exitSteps[b]).toBe(one.exitSteps[0]);
        const got = res.logits.data.subarray(b * 11, (b + 1) * 11);
        for (let v = 0; v < 11; v++) expect(got[v]).toBeCloseTo(one.logits.data[v]!, 5);
        zSum += res.exitSteps[b]!;
      });
      seen.add(Array.from(res.exitSteps).join(","));
      expect(res.layersRun).toBe(zSum * N);
      expect(res.layersSkipped).toBe((3 * R - zSum) * N);
      run += res.layersRun;
    }
    // The test is only meaningful if the rows really took different exits.
    expect([...seen].some((k) => new Set(k.split(",")).size > 1)).toBe(true);
    expect(run).toBeGreaterThan(3 * T * N);
    expect(run).toBeLessThan(3 * T * R * N);
    for (let r = 0; r < R; r++)
      st.states[r]!.forEach((s, i) => {
        seqs.forEach((_, b) => {
          const got = rowOf(s, b);
          const want = rowOf(singles[b]!.states[r]![i]!, 0);
          got.forEach((arr, k) => {
            for (let j = 0; j < arr.length; j++) expect(arr[j]).toBeCloseTo(want[k]![j]!, 5);
          });
        });
      });
  });

  it("skipped steps: Mamba states unchanged, attention gets the k/v of h(z) at the position", () => {
    const m = gatedModel(cfg, 7);
    const q = 0.6;
    const st = initDecodeState(m, 3, T);
    let checkedSkips = 0;
    for (let t = 0; t < T; t++) {
      const before = cloneState(st);
      const full = decodeStep(m, cloneState(st), column(t));
      const res = decodeStepEarlyExit(m, st, column(t), { q });
      for (let b = 0; b < 3; b++) {
        const z = res.exitSteps[b]!;
        for (let r = z; r < R; r++) {
          checkedSkips++;
          m.layers.forEach((layer, i) => {
            const s = st.states[r]![i]!;
            const o = before.states[r]![i]!;
            if (!(s instanceof KvCache)) {
              expect(rowOf(s, b)).toEqual(rowOf(o, b));
              return;
            }
            if (!(o instanceof KvCache)) throw new Error("kinds differ");
            const { nKvHeads: Hkv, headDim: hd, capacity: cap } = s;
            expect(s.length).toBe(t + 1);
            // Earlier positions untouched.
            for (let g = 0; g < Hkv; g++) {
              const o0 = (b * Hkv + g) * cap * hd;
              expect(s.k.subarray(o0, o0 + t * hd)).toEqual(o.k.subarray(o0, o0 + t * hd));
            }
            if (!cfg.loop_norm) return;
            // With loop_norm, h(z) is readout(z) of full decoding from the same state.
            const hz = tensor(full.readouts[z - 1]!.data.slice(b * 16, (b + 1) * 16), [1, 16]);
            const mixer = layer.mixer as unknown as AttentionMixer;
            const u = noGrad(() => rmsnorm(hz, layer.norm, cfg.norm_eps));
            const k = noGrad(() => linear(u, mixer.kProj)).data;
            const v = noGrad(() => linear(u, mixer.vProj)).data;
            ropeInPlace(k, [1, 1, Hkv, hd], cfg.attention.rope_theta, t);
            for (let g = 0; g < Hkv; g++) {
              const at = ((b * Hkv + g) * cap + t) * hd;
              for (let e = 0; e < hd; e++) {
                expect(s.k[at + e]).toBeCloseTo(k[g * hd + e]!, 5);
                expect(s.v[at + e]).toBeCloseTo(v[g * hd + e]!, 5);
              }
            }
          });
        }
      }
    }
    expect(checkedSkips).toBeGreaterThan(0);
  });

  it("q = 1 with maxStep k is the loop truncated to k steps: logits(k) of full decoding", () => {
    const m = gatedModel(cfg, 9);
    for (const k of [1, 2]) {
      const full = initDecodeState(m, 2, T);
      const early = initDecodeState(m, 2, T);
      const untouched = cloneState(early);
      for (let t = 0; t < T; t++) {
        const want = decodeStep(m, full, column(t, seqs.slice(0, 2))).logits[k - 1]!;
        const got = decodeStepEarlyExit(m, early, column(t, seqs.slice(0, 2)), {
          q: 1,
          maxStep: k,
        });
        expect(got.logits.data).toEqual(want.data);
        expect(Array.from(got.exitSteps)).toEqual([k, k]);
        expect(got.layersSkipped).toBe(2 * (R - k) * N);
      }
      for (let r = 0; r < R; r++)
        early.states[r]!.forEach((s, i) => {
          const o = (r < k ? full : untouched).states[r]![i]!;
          if (!(s instanceof KvCache))
            expect(rowOf(s, 0).concat(rowOf(s, 1))).toEqual(rowOf(o, 0).concat(rowOf(o, 1)));
        });
    }
  });

  it("skipped 'propagate': a skipped Mamba state takes h(z) in as a one-token step would", () => {
    const m = gatedModel(cfg, 10);
    const q = 0.6;
    const st = initDecodeState(m, 3, T);
    const nSsm = N - nAttn;
    let checked = 0;
    for (let t = 0; t < T; t++) {
      const before = cloneState(st);
      const full = decodeStep(m, cloneState(st), column(t));
      const res = decodeStepEarlyExit(m, st, column(t), { q, skipped: "propagate" });
      let skippedSteps = 0;
      for (let b = 0; b < 3; b++) {
        const z = res.exitSteps[b]!;
        skippedSteps += R - z;
        if (!cfg.loop_norm) continue;
        const hz = tensor(full.readouts[z - 1]!.data.slice(b * 16, (b + 1) * 16), [1, 16]);
        for (let r = z; r < R; r++)
          m.layers.forEach((layer, i) => {
            const o = before.states[r]![i]!;
            const s = st.states[r]![i]!;
            if (o instanceof KvCache || s instanceof KvCache) return;
            // Reference: the layer's own one-token step on a batch-1 copy of row b's state.
            const [conv, ssm] = rowOf(o, b);
            const one = { conv: conv!, ssm: ssm!, batch: 1 };
            noGrad(() => layer.step(one, hz));
            const [gotConv, gotSsm] = rowOf(s, b);
            expect(gotConv).toEqual(one.conv);
            for (let j = 0; j < gotSsm!.length; j++) expect(gotSsm![j]).toBeCloseTo(one.ssm[j]!, 5);
            checked++;
          });
      }
      expect(res.ssmPropagated).toBe(skippedSteps * nSsm);
      expect(res.kvPropagated).toBe(skippedSteps * nAttn);
    }
    if (cfg.loop_norm && nAttn < N) expect(checked).toBeGreaterThan(0);
  });

  it("rejects bad input with the argument named", () => {
    const m = gatedModel(cfg, 8);
    const st = initDecodeState(m, 2, 1);
    expect(() => decodeStepEarlyExit(m, st, [1, 2], { q: 1.5 })).toThrow(
      /q must be in \[0, 1\], got 1.5/,
    );
    expect(() => decodeStepEarlyExit(m, st, [1], { q: 0.5 })).toThrow(
      /expected 2 token ids, got 1/,
    );
    expect(() => decodeStepEarlyExit(m, st, [1, 2], { q: 0.5, maxStep: R + 1 })).toThrow(
      new RegExp(`maxStep must be an integer in \\[1, ${R}\\], got ${R + 1}`),
    );
    expect(() =>
      decodeStepEarlyExit(m, st, [1, 2], { q: 0.5, skipped: "drop" as "carry" }),
    ).toThrow(/skipped must be "carry" or "propagate", got "drop"/);
    decodeStepEarlyExit(m, st, [1, 2], { q: 0.5 });
    expect(() => decodeStepEarlyExit(m, st, [1, 2], { q: 0.5 })).toThrow(
      /exceeds the decode capacity 1/,
    );
    const plain = new LoopedModel({ ...cfg, exit_gate: false });
    expect(() => decodeStepEarlyExit(plain, initDecodeState(plain, 1, 1), [1], { q: 1 })).toThrow(
      /no exit gate/,
    );
  });
});
