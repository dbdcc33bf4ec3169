import { backward, gradcheck, noGrad, Rng, Tensor, withScratch, zeros } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { softplusScalar } from "@loop/tensor/kernel";
import { describe, expect, it } from "vitest";
import { relErr } from "./helpers.test-util.js";
import { type Mamba2Config, mamba2Dims } from "./mamba2-config.js";
import { Mamba2Mixer } from "./mamba2-mixer.js";

const tiny: Mamba2Config = {
  dModel: 8,
  dState: 4,
  headdim: 4,
  expand: 2,
  nGroups: 2,
  dConv: 3,
  chunkSize: 4,
  normEps: 1e-5,
};

/** Rows [t0, t1) of u [B,T,D] as a new [B, t1−t0, D] tensor. */
function timeSlice(u: Tensor, t0: number, t1: number): Tensor {
  const [B, T, D] = u.shape as [number, number, number];
  const out = new Float32Array(B * (t1 - t0) * D);
  for (let b = 0; b < B; b++) {
    out.set(u.data.subarray((b * T + t0) * D, (b * T + t1) * D), b * (t1 - t0) * D);
  }
  return new Tensor(out, [B, t1 - t0, D]);
}

/** Mixer with non-trivial D, norm weight and conv bias (init sets them to constants). */
function mixer(cfg: Mamba2Config, seed: number): Mamba2Mixer {
  const m = new Mamba2Mixer(cfg, { rng: new Rng(seed), nLayers: 2 });
  const rng = new Rng(seed + 1);
  for (const t of [m.d, m.normWeight, m.convBias]) {
    for (let i = 0; i < t.size; i++) t.data[i] = t.data[i]! + rng.uniformIn(-0.5, 0.5);
  }
  return m;
}

describe("mamba2Dims", () => {
  it("derives the sizes of docs/model.md §3", () => {
    expect(mamba2Dims(tiny)).toEqual({ dInner: 16, nHeads: 4, convDim: 32, inProjDim: 52 });
  });
  it("rejects bad configs naming the field", () => {
    expect(() => mamba2Dims({ ...tiny, headdim: 5 })).toThrow(/headdim must divide d_inner = 16/);
    expect(() => mamba2Dims({ ...tiny, nGroups: 3 })).toThrow(/nGroups must divide .* H = 4/);
    expect(() => mamba2Dims({ ...tiny, chunkSize: 0 })).toThrow(/chunkSize must be a positive/);
    expect(() => mamba2Dims({ ...tiny, dState: 2.5 })).toThrow(/dState/);
  });
});

describe("Mamba2Mixer parameters and init", () => {
  it("has the docs/model.md §6 names, shapes and decay flags", () => {
    const m = new Mamba2Mixer(tiny);
    const got = m.parameters().map((p) => [p.name, [...p.tensor.shape], p.decay]);
    expect(got).toEqual([
      ["in_proj.weight", [52, 8], true],
      ["conv1d.weight", [32, 1, 3], true],
      ["conv1d.bias", [32], false],
      ["dt_bias", [4], false],
      ["A_log", [4], false],
      ["D", [4], false],
      ["norm.weight", [16], false],
      ["out_proj.weight", [8, 16], true],
    ]);
    for (const p of m.parameters()) expect(p.tensor.requiresGrad).toBe(true);
  });

  it("initialises per §3 (statistics over many heads)", () => {
    const cfg = { ...tiny, dModel: 64, headdim: 2, nGroups: 1 };
    const m = new Mamba2Mixer(cfg, { rng: new Rng(3), nLayers: 4 });
    const dts = Array.from(m.dtBias.data, softplusScalar);
    expect(Math.min(...dts)).toBeGreaterThanOrEqual(1e-3 * (1 - 1e-5));
    expect(Math.max(...dts)).toBeLessThanOrEqual(1e-1 * (1 + 1e-5));
    // log-uniform: the median of ln dt sits near the middle of [ln 1e-3, ln 1e-1]
    const logs = dts.map(Math.log).sort((a, b) => a - b);
    expect(logs[logs.length >> 1]!).toBeCloseTo(Math.log(1e-2), 0);
    const aLog = Array.from(m.aLog.data);
    expect(Math.min(...aLog)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...aLog)).toBeLessThanOrEqual(Math.log(16) + 1e-6);
    expect(Array.from(m.d.data).every((v) => v === 1)).toBe(true);
    expect(Array.from(m.normWeight.data).every((v) => v === 1)).toBe(true);
    expect(Array.from(m.convBias.data).every((v) => v === 0)).toBe(true);
    const bound = (t: Tensor) => Math.max(...Array.from(t.data, Math.abs));
    expect(bound(m.inProj)).toBeLessThanOrEqual(1 / Math.sqrt(64));
    expect(bound(m.inProj)).toBeGreaterThan(0.9 / Math.sqrt(64));
    expect(bound(m.convWeight)).toBeLessThanOrEqual(1 / Math.sqrt(3));
    const outBound = 1 / Math.sqrt(128) / Math.sqrt(4);
    expect(bound(m.outProj)).toBeLessThanOrEqual(outBound);
    expect(bound(m.outProj)).toBeGreaterThan(0.9 * outBound);
  });

  it("is deterministic: no rng means new Rng(0)", () => {
    const a = new Mamba2Mixer(tiny);
    const b = new Mamba2Mixer(tiny, { rng: new Rng(0) });
    const c = new Mamba2Mixer(tiny, { rng: new Rng(1) });
    a.parameters().forEach((p, i) => {
      expect(Array.from(p.tensor.data)).toEqual(Array.from(b.parameters()[i]!.tensor.data));
    });
    expect(Array.from(c.inProj.data)).not.toEqual(Array.from(a.inProj.data));
  });
});

describe("Mamba2Mixer forward / prefill / step", () => {
  const cfg = { ...tiny, chunkSize: 3 };
  const m = mixer(cfg, 5);
  const u = randn([2, 10, 8], 9, { requiresGrad: false });
  const full = noGrad(() => m.forward(u)).data;

  it("token-by-token step reproduces forward at every position", () => {
    const st = m.initState(2);
    for (let t = 0; t < 10; t++) {
      const ut = timeSlice(u, t, t + 1);
      const y = m.step(st, new Tensor(ut.data, [2, 8]));
      const want = timeSlice(new Tensor(full, [2, 10, 8]), t, t + 1).data;
      expect(relErr(y.data, want), `t=${t}`).toBeLessThan(1e-5);
    }
  });

  it("prefill of the first part, then prefill or step of the rest, reproduces forward", () => {
    const whole = new Tensor(full, [2, 10, 8]);
    for (const cut of [1, 2, 4, 7]) {
      const st = m.initState(2);
      const y1 = m.prefill(st, timeSlice(u, 0, cut));
      expect(relErr(y1.data, timeSlice(whole, 0, cut).data)).toBeLessThan(1e-5);
      const y2 = m.prefill(st, timeSlice(u, cut, 10));
      expect(relErr(y2.data, timeSlice(whole, cut, 10).data), `cut=${cut}`).toBeLessThan(1e-5);
      const stepped = m.initState(2);
      m.prefill(stepped, timeSlice(u, 0, cut));
      for (let t = cut; t < 10; t++) {
        const y = m.step(stepped, new Tensor(timeSlice(u, t, t + 1).data, [2, 8]));
        expect(relErr(y.data, timeSlice(whole, t, t + 1).data)).toBeLessThan(1e-5);
      }
    }
  });

  it("prefill from a fresh state equals forward and a state after prefill equals steps", () => {
    const pst = m.initState(2);
    const y = m.prefill(pst, u);
    expect(relErr(y.data, full)).toBeLessThan(1e-6);
    const st = m.initState(2);
    for (let t = 0; t < 10; t++) m.step(st, new Tensor(timeSlice(u, t, t + 1).data, [2, 8]));
    expect(relErr(pst.conv, st.conv)).toBeLessThan(1e-6);
    expect(relErr(pst.ssm, st.ssm)).toBeLessThan(1e-5);
  });

  it("absorb updates the chosen rows' state exactly as step does, and leaves the others", () => {
    const stepped = m.initState(3);
    const absorbed = m.initState(3);
    for (let t = 0; t < 4; t++) {
      const ut = randn([3, 8], 20 + t, { requiresGrad: false });
      m.step(stepped, ut);
      // rows 0 and 2 take the token in; row 1 skips it
      const rows = [0, 2];
      const sub = new Tensor(
        Float32Array.from([...ut.data.subarray(0, 8), ...ut.data.subarray(16, 24)]),
        [2, 8],
      );
      m.absorb(absorbed, sub, rows);
    }
    const convRow = stepped.conv.length / 3;
    const ssmRow = stepped.ssm.length / 3;
    for (const b of [0, 2]) {
      expect(Array.from(absorbed.conv.subarray(b * convRow, (b + 1) * convRow))).toEqual(
        Array.from(stepped.conv.subarray(b * convRow, (b + 1) * convRow)),
      );
      expect(Array.from(absorbed.ssm.subarray(b * ssmRow, (b + 1) * ssmRow))).toEqual(
        Array.from(stepped.ssm.subarray(b * ssmRow, (b + 1) * ssmRow)),
      );
    }
    expect(absorbed.ssm.subarray(ssmRow, 2 * ssmRow).every((v) => v === 0)).toBe(true);
    expect(() => m.absorb(absorbed, randn([1, 8], 1), [0, 1])).toThrow(/u must be \[2,8\]/);
    expect(() => m.absorb(absorbed, randn([1, 8], 1), [3])).toThrow(/row 3 is outside \[0, 3\)/);
  });

  it("rejects bad inputs with expected vs actual", () => {
    expect(() => m.forward(randn([2, 3, 7], 1))).toThrow(/u must be \[B,T,8\], got \[2,3,7\]/);
    expect(() => m.step(m.initState(1), randn([2, 8], 1))).toThrow(/state.batch must be 2/);
    expect(() => m.step(m.initState(2), randn([2, 3, 8], 1))).toThrow(/u must be \[B,8\]/);
  });
});

describe("Mamba2Mixer gradients", () => {
  it("gradcheck of the whole mixer: input and all parameters", () => {
    const m = mixer({ ...tiny, chunkSize: 2 }, 21);
    const u = randn([1, 5, 8], 22);
    const params = m.parameters().map((p) => p.tensor);
    gradcheck(() => m.forward(u), [u, ...params], { maxPerInput: 24 });
  });

  it("prefill passes gradients to the parameters when starting from a state", () => {
    const m = mixer({ ...tiny, chunkSize: 2 }, 31);
    const u = randn([1, 6, 8], 32);
    const st = m.initState(1);
    noGrad(() => m.prefill(st, randn([1, 3, 8], 33, { requiresGrad: false })));
    const copy = () => ({ conv: st.conv.slice(), ssm: st.ssm.slice(), batch: 1 });
    const params = m.parameters().map((p) => p.tensor);
    gradcheck(() => m.prefill(copy(), u), [u, ...params], { maxPerInput: 16 });
    const y = m.prefill(st, u);
    backward(y);
    for (const p of params) expect(p.grad!.some((v) => v !== 0)).toBe(true);
  });
});

describe("Mamba2Mixer with transformers' settings: dt limit and whole-Di norm", () => {
  // dt lands on both sides of [0.05, 0.2] with these weights (dt_bias nudged upwards)
  const cfg: Mamba2Config = { ...tiny, chunkSize: 3, dtLimit: [0.05, 0.2], normGroups: 1 };
  const m = mixer(cfg, 41);
  for (let h = 0; h < m.dtBias.size; h++) m.dtBias.data[h] = -2.5 + h;
  const u = randn([2, 10, 8], 42, { requiresGrad: false });

  it("steps reproduce forward, and each setting changes the numbers", () => {
    const full = noGrad(() => m.forward(u)).data;
    const st = m.initState(2);
    for (let t = 0; t < 10; t++) {
      const y = m.step(st, new Tensor(timeSlice(u, t, t + 1).data, [2, 8]));
      const want = timeSlice(new Tensor(full, [2, 10, 8]), t, t + 1).data;
      expect(relErr(y.data, want), `t=${t}`).toBeLessThan(1e-5);
    }
    for (const other of [
      { ...cfg, dtLimit: undefined },
      { ...cfg, normGroups: undefined },
    ]) {
      const o = new Mamba2Mixer(other, { rng: new Rng(41), nLayers: 2 });
      for (const [a, b] of o.parameters().map((p, i) => [p, m.parameters()[i]!] as const))
        a.tensor.data.set(b.tensor.data);
      expect(relErr(noGrad(() => o.forward(u)).data, full)).toBeGreaterThan(1e-3);
    }
  });

  it("gradcheck through the clamp and the whole-Di norm", () => {
    const g = mixer({ ...cfg, chunkSize: 2 }, 43);
    for (let h = 0; h < g.dtBias.size; h++) g.dtBias.data[h] = -2.5 + h;
    const x = randn([1, 5, 8], 44);
    const params = g.parameters().map((p) => p.tensor);
    gradcheck(() => g.forward(x), [x, ...params], { maxPerInput: 24 });
  });

  it("rejects a norm grouping that does not divide d_inner and limits out of order", () => {
    expect(() => mamba2Dims({ ...tiny, normGroups: 3 })).toThrow(/normGroups must divide/);
    expect(() => mamba2Dims({ ...tiny, dtLimit: [1, 0] })).toThrow(/lo ≤ hi/);
  });
});

describe("Mamba2Mixer inside a training step", () => {
  it("keeps its parameters when built inside withScratch", () => {
    // in_proj [148,32] and out_proj [32,64] are large enough for the step pool (≥ 1024 floats)
    const cfg = { ...tiny, dModel: 32, headdim: 16, nGroups: 1, dState: 8 };
    const ref = new Mamba2Mixer(cfg, { rng: new Rng(8) });
    const m = withScratch(() => new Mamba2Mixer(cfg, { rng: new Rng(8) }));
    // another step reuses whatever the pool handed out
    withScratch(() => {
      for (const p of m.parameters()) zeros([...p.tensor.shape]).data.fill(7);
    });
    m.parameters().forEach((p, i) => {
      expect(Array.from(p.tensor.data)).toEqual(Array.from(ref.parameters()[i]!.tensor.data));
    });
  });
});
