import { gradcheck, noGrad, Rng, type Tensor, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { AttentionMixer } from "./attention-mixer.js";

/** Rows t0..t1-1 of batch entry b of a [B, T, D] tensor. */
function rows(t: Tensor, T: number, D: number, b: number, t0: number, t1: number): number[] {
  return Array.from(t.data.subarray((b * T + t0) * D, (b * T + t1) * D));
}

function expectClose(actual: number[], expected: number[], tol = 2e-5) {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < actual.length; i++) {
    expect(Math.abs(actual[i]! - expected[i]!)).toBeLessThanOrEqual(
      tol * (1 + Math.abs(expected[i]!)),
    );
  }
}

describe("AttentionMixer", () => {
  const cfg = { dModel: 16, nHeads: 4, nKvHeads: 2, ropeTheta: 10000 };

  it("has the docs/model.md §6 parameters with the documented shapes and init bounds", () => {
    const m = new AttentionMixer(cfg, { rng: new Rng(3), nLayers: 4 });
    const ps = m.parameters();
    expect(ps.map((p) => [p.name, [...p.tensor.shape], p.decay])).toEqual([
      ["q_proj.weight", [16, 16], true],
      ["k_proj.weight", [8, 16], true],
      ["v_proj.weight", [8, 16], true],
      ["o_proj.weight", [16, 16], true],
    ]);
    const maxAbs = (t: Tensor) => t.data.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
    expect(maxAbs(m.qProj)).toBeLessThanOrEqual(1 / 4);
    expect(maxAbs(m.qProj)).toBeGreaterThan(0.2);
    expect(maxAbs(m.oProj)).toBeLessThanOrEqual(1 / 4 / 2);
    expect(maxAbs(m.oProj)).toBeGreaterThan(0.1);
    // Same seed, same weights; default rng is Rng(0).
    const again = new AttentionMixer(cfg, { rng: new Rng(3), nLayers: 4 });
    expect(Array.from(again.kProj.data)).toEqual(Array.from(m.kProj.data));
    expect(Array.from(new AttentionMixer(cfg).vProj.data)).toEqual(
      Array.from(new AttentionMixer(cfg, { rng: new Rng(0) }).vProj.data),
    );
  });

  it("step through a KV cache reproduces forward at every position", () => {
    const m = new AttentionMixer(cfg, { rng: new Rng(1) });
    const [B, T, D] = [2, 9, 16];
    const u = randn([B, T, D], 2, { requiresGrad: false });
    const full = noGrad(() => m.forward(u));
    const cache = m.initState(B, 12);
    expect(cache.bytes).toBe(2 * B * 2 * 12 * 4 * 4);
    for (let t = 0; t < T; t++) {
      const ut = tensor([...rows(u, T, D, 0, t, t + 1), ...rows(u, T, D, 1, t, t + 1)], [B, D]);
      const y = m.step(cache, ut);
      expect(y.shape).toEqual([B, D]);
      expect(y.requiresGrad).toBe(false);
      expect(cache.length).toBe(t + 1);
      for (let b = 0; b < B; b++) {
        expectClose(Array.from(y.data.subarray(b * D, (b + 1) * D)), rows(full, T, D, b, t, t + 1));
      }
    }
  });

  it("absorb writes the key and value step would write for the chosen rows, and no length", () => {
    const m = new AttentionMixer(cfg, { rng: new Rng(4) });
    const [B, D] = [3, 16];
    const stepped = m.initState(B, 4);
    const absorbed = m.initState(B, 4);
    for (let t = 0; t < 3; t++) {
      const ut = randn([B, D], 30 + t, { requiresGrad: false });
      m.step(stepped, ut);
      const sub = tensor([...ut.data.subarray(0, D), ...ut.data.subarray(2 * D, 3 * D)], [2, D]);
      m.absorb(absorbed, sub, [0, 2]);
      expect(absorbed.length).toBe(t);
      absorbed.advance();
    }
    const rowLen = stepped.k.length / B; // [Hkv, cap, hd] per row
    for (const b of [0, 2]) {
      const at = (c: Float32Array) => Array.from(c.subarray(b * rowLen, (b + 1) * rowLen));
      expect(at(absorbed.k)).toEqual(at(stepped.k));
      expect(at(absorbed.v)).toEqual(at(stepped.v));
    }
    expect(absorbed.k.subarray(rowLen, 2 * rowLen).every((x) => x === 0)).toBe(true);
    absorbed.advance();
    expect(() => absorbed.advance()).toThrow(/position 4 exceeds the capacity 4/);
    expect(() => m.absorb(absorbed, randn([1, D], 1), [0, 1])).toThrow(/u must be \[2, 16\]/);
  });

  it("prefill in chunks reproduces forward and step, and forward with an offset continues positions", () => {
    const m = new AttentionMixer({ ...cfg, nKvHeads: 1 }, { rng: new Rng(4) });
    const [B, T, D] = [1, 10, 16];
    const u = randn([B, T, D], 5, { requiresGrad: false });
    const full = noGrad(() => m.forward(u));
    const cache = m.initState(B, T);
    const chunks = [4, 1, 5];
    let t0 = 0;
    for (const n of chunks) {
      const part = tensor(rows(u, T, D, 0, t0, t0 + n), [B, n, D]);
      const y = m.prefill(cache, part);
      expectClose(Array.from(y.data), rows(full, T, D, 0, t0, t0 + n));
      t0 += n;
    }
    // The chunks (the first into the empty cache on the tiled kernel, the rest on the decode
    // loop) leave the keys and values that one step per token leaves.
    const stepped = m.initState(B, T);
    for (let t = 0; t < T; t++) m.step(stepped, tensor(rows(u, T, D, 0, t, t + 1), [B, D]));
    expect(cache.length).toBe(T);
    expectClose(Array.from(cache.k), Array.from(stepped.k));
    expectClose(Array.from(cache.v), Array.from(stepped.v));
    // A lone token attends only to itself; q and k rotate by the same angle, so the offset cancels.
    const one = tensor(rows(u, T, D, 0, 3, 4), [1, 1, D]);
    const a = noGrad(() => m.forward(one, null, 0)).data;
    const b = noGrad(() => m.forward(one, null, 7)).data;
    expectClose(Array.from(b), Array.from(a));
  });

  it("gradient (finite differences) through projections, RoPE and attention", () => {
    const m = new AttentionMixer(
      { dModel: 8, nHeads: 2, nKvHeads: 1, ropeTheta: 100 },
      {
        rng: new Rng(6),
      },
    );
    const u = randn([2, 5, 8], 7);
    gradcheck(() => m.forward(u, null, 2), [u, m.qProj, m.kProj, m.vProj, m.oProj], {
      maxPerInput: 24,
    });
  });

  it("rejects bad configurations and inputs with messages naming the values", () => {
    expect(() => new AttentionMixer({ ...cfg, dModel: 18 })).toThrow(/dModel=18.*nHeads=4/);
    expect(() => new AttentionMixer({ ...cfg, nKvHeads: 3 })).toThrow(/nHeads=4.*nKvHeads=3/);
    expect(() => new AttentionMixer({ ...cfg, dModel: 12 })).toThrow(/head_dim.*3.*even/);
    const m = new AttentionMixer({ ...cfg, maxPositions: 8 });
    expect(() => m.forward(randn([1, 6, 16], 1), null, 3)).toThrow(
      /positions 3\.\.8.*maxPositions=8/,
    );
    expect(() => m.forward(randn([1, 6, 15], 1))).toThrow(/\[B, T, 16\].*\[1,6,15\]/);
    const cache = m.initState(1, 2);
    const u = randn([1, 16], 2, { requiresGrad: false });
    m.step(cache, u);
    m.step(cache, u);
    expect(() => m.step(cache, u)).toThrow(/position 2.*capacity 2/);
    const big = m.initState(1, 20);
    big.length = 8;
    expect(() => m.step(big, u)).toThrow(/positions 8\.\.8.*maxPositions=8/);
    expect(() => m.step(m.initState(2, 4), u)).toThrow(/batch=2.*batch=1/);
  });
});
