/**
 * End-to-end check of the mixer against the whole-model golden case mamba-1x1 (one Mamba-2
 * layer, one loop, tied head). The model around the mixer is rebuilt from @loop/tensor ops:
 * logits = norm_f(h + mixer(rmsnorm(h))) · Eᵀ with h = E[tokens] (docs/model.md §1–§2).
 */
import { readFileSync } from "node:fs";
import {
  add,
  backward,
  crossEntropy,
  embedding,
  intTensor,
  linear,
  rmsnorm,
  Tensor,
} from "@loop/tensor";
import { assignParameter } from "@loop/tensor/internal";
import { expectGolden, goldenPath, loadGolden } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { Mamba2Mixer } from "./mamba2-mixer.js";

describe("Mamba2Mixer inside golden model mamba-1x1", () => {
  const cfg = JSON.parse(readFileSync(goldenPath("mamba-1x1", "config.json"), "utf8"));
  const inputs = JSON.parse(readFileSync(goldenPath("mamba-1x1", "inputs.json"), "utf8"));
  const weights = loadGolden("mamba-1x1", "model.safetensors");
  const outputs = loadGolden("mamba-1x1", "outputs.safetensors");
  const tokens: number[][] = inputs.tokens;
  const targets: number[][] = inputs.targets;
  const [B, T] = [tokens.length, tokens[0]!.length];

  // The golden chunk size (64) exceeds T; chunk sizes 5 and 1 also exercise the inter-chunk path.
  for (const chunkSize of [cfg.ssm.chunk_size as number, 5, 1]) {
    it(`logits, loss and every mixer gradient match (chunk size ${chunkSize})`, () => {
      const m = new Mamba2Mixer({
        dModel: cfg.d_model,
        dState: cfg.ssm.d_state,
        headdim: cfg.ssm.headdim,
        expand: cfg.ssm.expand,
        nGroups: cfg.ssm.n_groups,
        dConv: cfg.ssm.d_conv,
        chunkSize,
        normEps: cfg.norm_eps,
      });
      const pre = "backbone.layers.0.mixer.";
      for (const p of m.parameters()) {
        const w = weights.get(pre + p.name)!;
        assignParameter(p.tensor, w.data, w.shape, p.name);
      }
      const leaf = (n: string) => {
        const w = weights.get(n)!;
        return new Tensor(Float32Array.from(w.data), w.shape, true);
      };
      const E = leaf("backbone.embeddings.weight");
      const norm = leaf("backbone.layers.0.norm.weight");
      const normF = leaf("backbone.norm_f.weight");
      const h0 = embedding(intTensor(tokens.flat(), [B, T]), E);
      const h1 = add(h0, m.forward(rmsnorm(h0, norm, cfg.norm_eps)));
      const logits = linear(rmsnorm(h1, normF, cfg.norm_eps), E);
      expectGolden("logits.step1", logits.data, outputs.get("logits.step1")!.data, "forward");
      const loss = crossEntropy(logits, intTensor(targets.flat(), [B, T]));
      expectGolden("loss.final", loss.data, outputs.get("loss.final")!.data, "forward");
      backward(loss);
      for (const p of m.parameters()) {
        const want = outputs.get(`grad.final.${pre}${p.name}`)!.data;
        expect(p.tensor.grad, p.name).not.toBeNull();
        expectGolden(p.name, p.tensor.grad!, want, "grad");
      }
      expectGolden(
        "embeddings",
        E.grad!,
        outputs.get("grad.final.backbone.embeddings.weight")!.data,
        "grad",
      );
    });
  }
});
