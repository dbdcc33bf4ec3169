/**
 * A custom sequence mixer through the supported extension point (`ModelOptions.mixer`), trained
 * with the library's `Trainer` and decoded token by token.
 *
 * The mixer is a gated short convolution (H3/Hyena-style):
 *   x = u·in_projᵀ;  y = silu(causal_conv1d(x, conv.weight, conv.bias));  out = y·out_projᵀ
 * Its decoding state is the conv's last K−1 inputs of each row. One class implements the
 * `SequenceMixer` interface of @loop/tensor; the model then uses that one object in the training
 * forward, decoding, prefill and early-exit decoding, so decoding reproduces the forward.
 *
 * Run: `pnpm tsx --conditions=@loop/source examples/custom-mixer.ts` (from a checkout), or with
 * the packages installed, `npx tsx custom-mixer.ts`.
 */
import { decodeStep, initDecodeState, LoopedModel, parseConfig } from "@loop/looped";
import { causalConv1d, causalConv1dState } from "@loop/ssm-kernels";
import { pHop } from "@loop/tasks";
import {
  intTensor,
  linear,
  type NamedParameter,
  noGrad,
  parameter,
  type Rng,
  reshape,
  type SequenceMixer,
  silu,
  type Tensor,
  tensor,
} from "@loop/tensor";
import { resolveTrainOptions, Trainer } from "@loop/train";

/** The decoding state: conv history [batch, D, K−1] (oldest first). */
export interface ShortConvState {
  conv: Float32Array;
  batch: number;
}

/** u [B,T,D] → silu(causal_conv1d(u·in_projᵀ))·out_projᵀ, one state per row while decoding. */
export class ShortConvMixer implements SequenceMixer<ShortConvState> {
  /** A recurrent state: a token that skips a loop step may leave it as it is. */
  readonly positional = false;
  readonly inProj: Tensor;
  readonly convWeight: Tensor;
  readonly convBias: Tensor;
  readonly outProj: Tensor;

  constructor(
    readonly dModel: number,
    readonly width: number,
    rng: Rng,
  ) {
    const D = dModel;
    const uniform = (n: number, bound: number, name: string) =>
      rng.child(name).fillUniform(new Float32Array(n), -bound, bound);
    this.inProj = parameter(uniform(D * D, 1 / Math.sqrt(D), "in"), [D, D], "in_proj.weight");
    this.convWeight = parameter(uniform(D * width, 0.5, "conv"), [D, 1, width], "conv.weight");
    this.convBias = parameter(new Float32Array(D), [D], "conv.bias");
    this.outProj = parameter(uniform(D * D, 1 / Math.sqrt(D), "out"), [D, D], "out_proj.weight");
  }

  parameters(): NamedParameter[] {
    return [
      { name: "in_proj.weight", tensor: this.inProj, decay: true },
      { name: "conv.weight", tensor: this.convWeight, decay: true },
      { name: "conv.bias", tensor: this.convBias, decay: false },
      { name: "out_proj.weight", tensor: this.outProj, decay: true },
    ];
  }

  /** Training forward from an empty history (differentiable; packed documents reset the conv). */
  forward(u: Tensor, seqIdx: Int32Array | null = null): Tensor {
    const x = linear(u, this.inProj);
    const y = causalConv1d(x, this.convWeight, this.convBias, null, seqIdx);
    return linear(silu(y), this.outProj);
  }

  initState(batch: number, _capacity: number): ShortConvState {
    return { conv: new Float32Array(batch * this.dModel * (this.width - 1)), batch };
  }

  /** The next T tokens from the carried history; the history moves on by T. */
  prefill(state: ShortConvState, u: Tensor): Tensor {
    const [B, T] = u.shape as [number, number, number];
    const D = this.dModel;
    const K = this.width;
    const x = linear(u, this.inProj);
    const init = tensor(state.conv, [B, D, K - 1]); // a copy: the history is overwritten below
    const y = causalConv1d(x, this.convWeight, this.convBias, init);
    const shape = { batch: B, seqLen: T, channels: D, width: K };
    state.conv.set(causalConv1dState(shape, x.data, state.conv));
    return linear(silu(y), this.outProj);
  }

  /** One token u [B,D] → [B,D]: a prefill of length 1. */
  step(state: ShortConvState, u: Tensor): Tensor {
    const B = u.shape[0]!;
    return noGrad(() => reshape(this.prefill(state, reshape(u, [B, 1, this.dModel])), [B, -1]));
  }

  /** Take one token into the rows `rows` without output (early exit's skipped steps). */
  absorb(state: ShortConvState, u: Tensor, rows: readonly number[]): void {
    this.withRows(state, rows, (sub) => this.step(sub, u));
  }

  /** `fn` on the history of the rows `rows` alone, what it changed copied back. */
  withRows<R>(state: ShortConvState, rows: readonly number[], fn: (sub: ShortConvState) => R): R {
    const n = this.dModel * (this.width - 1);
    const sub = { conv: new Float32Array(rows.length * n), batch: rows.length };
    rows.forEach((b, j) => {
      sub.conv.set(state.conv.subarray(b * n, (b + 1) * n), j * n);
    });
    const out = fn(sub);
    rows.forEach((b, j) => {
      state.conv.set(sub.conv.subarray(j * n, (j + 1) * n), b * n);
    });
    return out;
  }

  /** A recurrent state has no position to move on. */
  endPosition(_state: ShortConvState): void {}
}

/** Train a 2-layer, 2-loop model whose mixers are `ShortConvMixer`s, then decode with it. */
export function main(steps = 30): { losses: number[]; maxDecodeDiff: number } {
  const task = pHop({ alphabet: 3, length: 10, hops: 1 });
  const config = parseConfig({
    backbone: "mamba", // norms and residuals as a Mamba-2 stack's; every mixer is the factory's
    mixer: "ShortConvMixer", // config.json names it: loading the model needs the factory below
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 2,
    n_loops: 2,
  });
  // the extension point: every layer's mixer is a ShortConvMixer (return null to keep a built-in)
  const model = new LoopedModel(config, {
    seed: 1,
    mixer: ({ config, rng }) => new ShortConvMixer(config.d_model, 4, rng),
  });

  const opts = resolveTrainOptions({ steps, batchSize: 16, lr: 1e-2, warmupSteps: 5, seed: 1 });
  const trainer = new Trainer(model, task, opts);
  const losses: number[] = [];
  while (!trainer.done) losses.push(trainer.trainStep().loss);

  // decode one task sequence token by token and compare every position with the full forward
  const ids = Array.from(task.trainBatch(task.startCursor(7), 1).batch.tokens);
  const full = noGrad(() => model.forward(intTensor(ids, [1, ids.length]), { steps: "last" }));
  const V = config.vocab_size;
  const state = initDecodeState(model, 1, ids.length);
  let maxDecodeDiff = 0;
  ids.forEach((id, t) => {
    const { logits } = decodeStep(model, state, [id], false);
    const want = full.logits[0]!.data.subarray(t * V, (t + 1) * V);
    logits[0]!.data.forEach((v, j) => {
      maxDecodeDiff = Math.max(maxDecodeDiff, Math.abs(v - want[j]!));
    });
  });
  return { losses, maxDecodeDiff };
}

// Run as a program (not when a test imports it).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { losses, maxDecodeDiff } = main();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `loss: first 5 steps ${mean(losses.slice(0, 5)).toFixed(3)}, last 5 ${mean(losses.slice(-5)).toFixed(3)}`,
  );
  console.log(`decode vs forward, largest logit difference: ${maxDecodeDiff.toExponential(1)}`);
}
