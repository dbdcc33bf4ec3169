/**
 * A looped model on rows that pack several documents (ForwardOptions.seqIdx): every loop step's
 * logits and the loss gradient equal those of running each document alone, for the Mamba-2,
 * hybrid and Transformer backbones.
 */
import { add, backward, crossEntropy, intTensor, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { LoopedModel } from "./model.js";
import { tinyTwoLayers } from "./tiny-config.test-util.js";

const tiny = tinyTwoLayers(2);
const configs = {
  mamba: parseConfig({ ...tiny, backbone: "mamba" }),
  hybrid: parseConfig({ ...tiny, backbone: "hybrid", attn_layers: [1] }),
  transformer: parseConfig({ ...tiny, backbone: "transformer", mlp: { d_ff: 24 } }),
};
const T = 11;
const tok = [1, 4, 2, 9, 0, 3, 3, 7, 10, 5, 6, 2, 8, 1, 0, 2, 2, 4, 9, 1, 3, 5];
/** row 0: documents at 0, 3 and 9 (a chunk of 4 holds a start mid-chunk); row 1: one document */
const starts = [[0, 3, 9], [0]];
const seq = Int32Array.from(
  starts.flatMap((s) => Array.from({ length: T }, (_, t) => s.filter((x) => x <= t).length - 1)),
);

function grads(m: LoopedModel): Float32Array[] {
  return m
    .parameters()
    .map((p) => Float32Array.from(p.tensor.grad ?? new Float32Array(p.tensor.size)));
}

describe("packed documents through the looped model", () => {
  for (const [name, cfg] of Object.entries(configs)) {
    it(`${name}: logits of every loop step and the gradient equal separate documents`, () => {
      const m = new LoopedModel(cfg, { seed: 5 });
      const fwd = m.forward(intTensor(tok, [2, T]), { steps: "all", seqIdx: seq });
      // loss: Σ over loop steps of the mean cross-entropy against the tokens themselves
      let loss: Tensor | null = null;
      const lossOf = (logits: Tensor[], rowTok: number[]) =>
        logits.map((l) => crossEntropy(l, intTensor(rowTok, [l.shape[0]!, l.shape[1]!])));
      for (const l of lossOf(fwd.logits, tok)) loss = loss ? add(loss, l) : l;
      backward(loss!, [Float32Array.of(1)]);
      const packedLogits = fwd.logits.map((l) => l.data.slice());
      const packedGrads = grads(m);
      for (const p of m.parameters()) p.tensor.grad = null;
      // separately: each document its own [1, len] forward; the packed loss is a mean over 2·T
      // positions, so each piece's mean is weighted by len / (2·T)
      const sepLogits = packedLogits.map((l) => new Float32Array(l.length));
      for (const [b, s] of starts.entries()) {
        s.forEach((t0, i) => {
          const t1 = i + 1 < s.length ? s[i + 1]! : T;
          const piece = tok.slice(b * T + t0, b * T + t1);
          const f = m.forward(intTensor(piece, [1, piece.length]), { steps: "all" });
          f.logits.forEach((l, r) => {
            sepLogits[r]!.set(l.data, (b * T + t0) * cfg.vocab_size);
          });
          const w = piece.length / (2 * T);
          const ls = lossOf(f.logits, piece);
          backward(ls.slice(1).reduce(add, ls[0]!), [Float32Array.of(w)]);
        });
      }
      packedLogits.forEach((l, r) => {
        expect(maxDiff(l, sepLogits[r]!), `logits step ${r + 1}`).toBeLessThan(1e-5);
      });
      const sepGrads = grads(m);
      packedGrads.forEach((g, i) => {
        expect(maxDiff(g, sepGrads[i]!), m.parameters()[i]!.name).toBeLessThan(1e-5);
      });
    });
  }
});

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
