/**
 * Test fixture (not exported): a tiny looped model shaped like @loop/looped's output, so the
 * gate's training paths can be exercised end to end without the real backbone.
 *   h(0) = E[tokens],  h(r) = h(r−1) + silu(h(r−1)·Wᵀ),  readout(r) = rmsnorm(h(r), g),
 *   logits(r) = readout(r)·Eᵀ  (tied head)
 * Shapes: tokens [B, T] → readouts R × [B, T, D], logits R × [B, T, V].
 */
import {
  add,
  embedding,
  type IntTensor,
  linear,
  type NamedParameter,
  parameter,
  Rng,
  rmsnorm,
  silu,
  type Tensor,
} from "@loop/tensor";

export class ToyLooped {
  readonly embed: Tensor;
  readonly layer: Tensor;
  readonly norm: Tensor;

  constructor(
    readonly vocab: number,
    readonly dModel: number,
    readonly nLoops: number,
    seed: number,
  ) {
    const rng = new Rng(seed);
    this.embed = parameter(rng.fillNormal(new Float32Array(vocab * dModel)), [vocab, dModel], "E");
    const s = 1 / Math.sqrt(dModel);
    this.layer = parameter(
      rng.fillNormal(new Float32Array(dModel * dModel), 0, s),
      [dModel, dModel],
      "W",
    );
    this.norm = parameter(new Float32Array(dModel).fill(1), [dModel], "g");
  }

  parameters(): NamedParameter[] {
    return [
      { name: "embed", tensor: this.embed, decay: true },
      { name: "layer", tensor: this.layer, decay: true },
      { name: "norm", tensor: this.norm, decay: false },
    ];
  }

  forward(tokens: IntTensor): { readouts: Tensor[]; logits: Tensor[] } {
    let h = embedding(tokens, this.embed);
    const readouts: Tensor[] = [];
    const logits: Tensor[] = [];
    for (let r = 0; r < this.nLoops; r++) {
      h = add(h, silu(linear(h, this.layer)));
      const readout = rmsnorm(h, this.norm);
      readouts.push(readout);
      logits.push(linear(readout, this.embed));
    }
    return { readouts, logits };
  }
}
