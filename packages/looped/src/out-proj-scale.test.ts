/**
 * out_proj_scale: the default initialises with the 1/√N of docs/model.md §3; "depth" divides
 * every residual output projection by a further √n_loops and changes nothing else.
 */
import { describe, expect, it } from "vitest";
import { configToJson, parseConfig, residualInitLayers } from "./config.js";
import { LoopedModel } from "./model.js";

const CONFIGS = {
  mamba: {
    backbone: "mamba",
    vocab_size: 40,
    d_model: 16,
    n_layers: 2,
    n_loops: 3,
    ssm: { d_state: 4, headdim: 8, chunk_size: 8 },
  },
  transformer: {
    backbone: "transformer",
    vocab_size: 40,
    d_model: 16,
    n_layers: 2,
    n_loops: 3,
    mlp: { d_ff: 32 },
  },
} as const;

/**
 * Σw and Σw² over every initial parameter at seed 7 under the default initialisation (1/√N),
 * pinned with this file's configs: a change to the default initialisation fails here.
 */
const DEFAULT_SUMS = {
  mamba: [98.88991769389395, 347.56694699972763],
  transformer: [78.2849493967824, 164.6391538070988],
} as const;

const RESIDUAL_OUT = /(mixer\.out_proj|mixer\.o_proj|mlp\.down_proj)\.weight$/;

function fingerprint(m: LoopedModel): [number, number] {
  let s = 0;
  let q = 0;
  for (const p of m.parameters())
    for (const v of p.tensor.data) {
      s += v;
      q += v * v;
    }
  return [s, q];
}

describe.each(Object.keys(CONFIGS) as (keyof typeof CONFIGS)[])("out_proj_scale (%s)", (name) => {
  const raw = CONFIGS[name];
  it("the default (absent or \"layers\") gives today's parameters and today's config.json", () => {
    const before = DEFAULT_SUMS[name];
    for (const cfg of [parseConfig(raw), parseConfig({ ...raw, out_proj_scale: "layers" })]) {
      expect(cfg.out_proj_scale).toBeUndefined();
      expect(configToJson(cfg)).not.toContain("out_proj_scale");
      expect(residualInitLayers(cfg)).toBe(2);
      const [s, q] = fingerprint(new LoopedModel(cfg, { seed: 7 }));
      expect(s).toBe(before[0]);
      expect(q).toBe(before[1]);
    }
  });
  it('"depth" divides the residual output projections by √n_loops, nothing else', () => {
    const cfg = parseConfig({ ...raw, out_proj_scale: "depth" });
    expect(residualInitLayers(cfg)).toBe(6);
    expect(parseConfig(JSON.parse(configToJson(cfg)))).toEqual(cfg);
    const base = new LoopedModel(parseConfig(raw), { seed: 7 }).parameters();
    const deep = new LoopedModel(cfg, { seed: 7 }).parameters();
    let scaled = 0;
    deep.forEach((p, i) => {
      const b = base[i]!;
      expect(p.name).toBe(b.name);
      if (!RESIDUAL_OUT.test(p.name)) {
        expect(p.tensor.data).toEqual(b.tensor.data);
        return;
      }
      scaled++;
      for (let j = 0; j < p.tensor.size; j++)
        expect(p.tensor.data[j]).toBeCloseTo(b.tensor.data[j]! / Math.sqrt(3), 7);
    });
    // two layers: out_proj (mamba) or o_proj and down_proj (transformer) in each
    expect(scaled).toBe(name === "mamba" ? 2 : 4);
  });
  it("names a bad value", () => {
    expect(() => parseConfig({ ...raw, out_proj_scale: "loops" })).toThrow(
      /out_proj_scale must be one of "layers", "depth", got "loops"/,
    );
  });
});
