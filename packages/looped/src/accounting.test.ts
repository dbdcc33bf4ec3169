import { Mamba2Mixer } from "@loop/ssm-kernels";
import { describe, expect, it } from "vitest";
import { countParameters, flopsPerToken } from "./accounting.js";
import { parseConfig } from "./config.js";
import { mamba2Config } from "./mixer-configs.js";
import { LoopedModel } from "./model.js";
import { formatPlan, planIsoFlops, planIsoParameter } from "./protocols.js";

const mamba = parseConfig({
  backbone: "mamba",
  vocab_size: 40,
  d_model: 48,
  n_layers: 2,
  n_loops: 3,
});

describe("accounting (docs/model.md §7)", () => {
  it("counts parameters exactly, a tied head once", () => {
    // D=48, Di=96, H=6, G·Ns=16, C=Di+2GNs=128, in_proj rows 2Di+2GNs+H = 230
    const layer = 48 + 230 * 48 + 128 * 4 + 128 + 6 + 6 + 6 + 96 + 48 * 96;
    expect(countParameters(mamba)).toBe(40 * 48 + 2 * layer + 48);
    const untied = parseConfig({ ...mamba, tie_embeddings: false, exit_gate: true });
    expect(countParameters(untied)).toBe(countParameters(mamba) + 40 * 48 + 48 + 1);
    const tr = parseConfig({
      backbone: "transformer",
      vocab_size: 37,
      d_model: 32,
      n_layers: 2,
      mlp: { d_ff: 96 },
      attention: { n_heads: 4, n_kv_heads: 2 },
    });
    const tl = 32 + 32 * 32 + 2 * 16 * 32 + 32 * 32 + 32 + 3 * 96 * 32;
    expect(countParameters(tr)).toBe(37 * 32 + 2 * tl + 32);
  });
  it("counts a model's actual parameters, custom mixers included", () => {
    expect(countParameters(new LoopedModel(mamba, { seed: 1 }))).toBe(countParameters(mamba));
    // every layer's mixer a Mamba-2 mixer of half the state size: fewer parameters than the config's
    const small = new LoopedModel(mamba, {
      seed: 1,
      mixer: ({ config, rng, nLayers }) =>
        new Mamba2Mixer(mamba2Config({ ...config, ssm: { ...config.ssm, d_state: 4 } }), {
          rng,
          nLayers,
        }),
    });
    let held = 0;
    for (const p of small.parameters()) held += p.tensor.data.length;
    expect(countParameters(small)).toBe(held);
    expect(countParameters(small)).toBeLessThan(countParameters(mamba));
  });
  it("computes forward FLOPs per token from the formulas", () => {
    const layer = 2 * 48 * 230 + 2 * 4 * 128 + 5 * 96 * 16 + 2 * 96 * 48;
    const f = flopsPerToken(mamba);
    expect(f.blockPerToken).toBe(2 * layer);
    expect(f.backbonePerToken).toBe(6 * layer);
    expect(f.headPerToken).toBe(2 * 48 * 40);
    expect(f.trainPerToken).toBe(3 * f.forwardPerToken);
    expect(f.logitSteps).toBe(1);
    const all = flopsPerToken(mamba, { logitSteps: 3 });
    expect([all.logitSteps, all.headPerToken]).toEqual([3, 3 * 2 * 48 * 40]);
    const hy = parseConfig({
      ...mamba,
      backbone: "hybrid",
      attn_layers: [1],
      attention: { n_heads: 4, n_kv_heads: 2 },
    });
    const att = 2 * 48 * (4 + 4) * 12 + 2 * 4 * 12 * 48 + 2 * ((128 + 1) / 2) * 4 * 12;
    expect(flopsPerToken(hy, { seqLen: 128 }).blockPerToken).toBe(layer + att);
  });
});

describe("protocols", () => {
  it("iso-parameter family keeps parameters and scales compute with R", () => {
    const rows = planIsoParameter(mamba, [1, 2, 4]);
    expect(rows.map((r) => r.label)).toEqual(["2⊗1", "2⊗2", "2⊗4"]);
    expect(new Set(rows.map((r) => r.params)).size).toBe(1);
    const block = flopsPerToken({ ...mamba, n_loops: 1 }).blockPerToken;
    expect(rows[2]!.flopsPerToken - rows[0]!.flopsPerToken).toBe(3 * block);
  });
  it("iso-FLOPs family pairs N⊗R with (N·R)⊗1 at equal compute", () => {
    const hy = parseConfig({ ...mamba, backbone: "hybrid", attn_layers: [1] });
    const rows = planIsoFlops(hy, [1, 3]);
    expect(rows.map((r) => r.label)).toEqual(["2⊗1", "2⊗3", "6⊗1"]);
    expect(rows[1]!.flopsPerToken).toBe(rows[2]!.flopsPerToken);
    expect(rows[2]!.config.attn_layers).toEqual([1, 3, 5]);
    expect(rows[2]!.params).toBeGreaterThan(rows[1]!.params);
    expect(formatPlan(rows)).toMatch(/6⊗1\s+baseline\s+6/);
    expect(() => planIsoFlops(hy, [0])).toThrow(/integer ≥ 1/);
  });
});
