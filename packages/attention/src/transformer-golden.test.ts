/**
 * End-to-end check of AttentionMixer and SwiGluMlp against the independent PyTorch model
 * (golden case transformer-2x2): a minimal N⊗R transformer (docs/model.md §1–§2) built from the two
 * modules and @loop/tensor ops, loaded with the case's weights, must reproduce the logits of
 * every loop step and the gradients of the final-loop loss for every mixer and MLP weight.
 */
import { readFileSync } from "node:fs";
import {
  add,
  backward,
  crossEntropy,
  embedding,
  intTensor,
  linear,
  type NamedParameter,
  parameter,
  prefixed,
  rmsnorm,
  type Tensor,
} from "@loop/tensor";
import { assignParameter } from "@loop/tensor/internal";
import { expectGolden, goldenPath, loadGolden } from "@loop/test-support";
import { describe, it } from "vitest";
import { AttentionMixer } from "./attention-mixer.js";
import { SwiGluMlp } from "./swiglu-mlp.js";

interface Config {
  vocab_size: number;
  d_model: number;
  n_layers: number;
  n_loops: number;
  norm_eps: number;
  attention: { n_heads: number; n_kv_heads: number; rope_theta: number };
  mlp: { d_ff: number };
}

const ones = (n: number, name: string) => parameter(new Float32Array(n).fill(1), [n], name);

describe("transformer-2x2 golden case through AttentionMixer and SwiGluMlp", () => {
  it("reproduces logits of every step and the final-loss gradients", () => {
    const dir = "transformer-2x2";
    const cfg = JSON.parse(readFileSync(goldenPath(dir, "config.json"), "utf8")) as Config;
    const inputs = JSON.parse(readFileSync(goldenPath(dir, "inputs.json"), "utf8")) as {
      tokens: number[][];
      targets: number[][];
    };
    const weights = loadGolden(dir, "model.safetensors");
    const expected = loadGolden(dir, "outputs.safetensors");
    const D = cfg.d_model;
    const layers = Array.from({ length: cfg.n_layers }, () => ({
      norm: ones(D, "norm"),
      mixer: new AttentionMixer({
        dModel: D,
        nHeads: cfg.attention.n_heads,
        nKvHeads: cfg.attention.n_kv_heads,
        ropeTheta: cfg.attention.rope_theta,
      }),
      mlpNorm: ones(D, "mlp_norm"),
      mlp: new SwiGluMlp({ dModel: D, dFf: cfg.mlp.d_ff }),
    }));
    const embed = parameter(new Float32Array(cfg.vocab_size * D), [cfg.vocab_size, D], "embed");
    const normF = ones(D, "norm_f");
    const head = parameter(new Float32Array(cfg.vocab_size * D), [cfg.vocab_size, D], "head");
    const params: NamedParameter[] = [
      { name: "backbone.embeddings.weight", tensor: embed, decay: false },
      { name: "backbone.norm_f.weight", tensor: normF, decay: false },
      { name: "lm_head.weight", tensor: head, decay: false },
    ];
    layers.forEach((l, i) => {
      const p = `backbone.layers.${i}`;
      params.push({ name: `${p}.norm.weight`, tensor: l.norm, decay: false });
      params.push({ name: `${p}.mlp_norm.weight`, tensor: l.mlpNorm, decay: false });
      params.push(...prefixed(`${p}.mixer`, l.mixer.parameters()));
      params.push(...prefixed(`${p}.mlp`, l.mlp.parameters()));
    });
    for (const p of params) {
      const w = weights.get(p.name);
      if (!w) throw new Error(`missing weight ${p.name}`);
      assignParameter(p.tensor, w.data, w.shape, p.name);
    }

    const B = inputs.tokens.length;
    const T = inputs.tokens[0]!.length;
    const tokens = intTensor(inputs.tokens.flat(), [B, T]);
    const targets = intTensor(inputs.targets.flat(), [B, T]);
    let h = embedding(tokens, embed);
    let logits: Tensor | null = null;
    for (let r = 1; r <= cfg.n_loops; r++) {
      for (const l of layers) {
        h = add(h, l.mixer.forward(rmsnorm(h, l.norm, cfg.norm_eps)));
        h = add(h, l.mlp.forward(rmsnorm(h, l.mlpNorm, cfg.norm_eps)));
      }
      logits = linear(rmsnorm(h, normF, cfg.norm_eps), head);
      expectGolden(
        `logits.step${r}`,
        logits.data,
        expected.get(`logits.step${r}`)!.data,
        "forward",
      );
    }
    const loss = crossEntropy(logits!, targets);
    expectGolden("loss.final", loss.data, expected.get("loss.final")!.data, "forward");
    backward(loss);
    for (const p of params) {
      const name = `grad.final.${p.name}`;
      expectGolden(name, p.tensor.grad!, expected.get(name)!.data, "grad");
    }
  });
});
