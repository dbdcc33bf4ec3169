/*
 * The exit gate module (docs/exit-gate.md): λ(r) = sigmoid(weight · readout(r) + bias) per loop step
 * and token. Parameters, named relative to the gate (the model prefixes "exit_gate."):
 *   weight [1, D], bias [1]   (docs/model.md §6 names exit_gate.weight, exit_gate.bias)
 * Init: weight ~ U(−1/√D, 1/√D) (PyTorch's nn.Linear bound, as Ouro's gate), bias = 0, so on
 * normed readouts λ starts near 1/2 with a small per-token spread. Both are weight-decayed like
 * any other linear layer except the bias (decay false, as every bias in docs/model.md §3).
 * `LoopedModel` holds one (config exit_gate), so the objectives, `forward` and early-exit decoding
 * all see this type.
 */
import {
  type Module,
  type NamedParameter,
  parameter,
  type Rng,
  sigmoid,
  type Tensor,
  weightLookup,
} from "@loop/tensor";
import { gateLogits } from "./gate-logits.js";

/** Size of an exit gate: the model width it reads readouts of. */
export interface ExitGateConfig {
  dModel: number;
}

/** How an exit gate initialises: its seeded stream and the prefix of its tensors' names. */
export interface ExitGateOptions {
  rng: Rng;
  /** Prefix of the tensors' debug names (a model passes "exit_gate."; default none). */
  namePrefix?: string;
}

/**
 * The Ouro exit gate (docs/exit-gate.md): per token and loop step, λ = sigmoid(w·readout + b), a
 * Linear(d_model → 1).
 */
export class ExitGate implements Module {
  /** The model width D the gate reads. */
  readonly dModel: number;
  /** Gate weight [1, D]. */
  readonly weight: Tensor;
  /** Gate bias [1]. */
  readonly bias: Tensor;

  constructor(config: ExitGateConfig, opts: ExitGateOptions) {
    const D = config.dModel;
    if (!Number.isInteger(D) || D < 1) {
      throw new Error(`ExitGate: dModel must be a positive integer, got ${D}`);
    }
    this.dModel = D;
    const bound = 1 / Math.sqrt(D);
    const w = new Float32Array(D);
    opts.rng.fillUniform(w, -bound, bound);
    const prefix = opts.namePrefix ?? "";
    this.weight = parameter(w, [1, D], `${prefix}weight`);
    this.bias = parameter(new Float32Array(1), [1], `${prefix}bias`);
  }

  /** The tensor named `name` ("weight", "bias"; docs/model.md §6 relative to the gate). */
  readonly weightNamed = weightLookup(this, "ExitGate");

  /** The gate's weight and bias, named `weight` and `bias` (weight decay on the weight only). */
  parameters(): NamedParameter[] {
    return [
      { name: "weight", tensor: this.weight, decay: true },
      { name: "bias", tensor: this.bias, decay: false },
    ];
  }

  /** Gate logits a [R, ...S] from readouts R × [...S, D]. */
  logits(readouts: readonly Tensor[]): Tensor {
    // the CPU model's fused float64 op (gate-on.ts composes the same on device kernels)
    return gateLogits(readouts, this.weight, this.bias);
  }

  /**
   * Gate logit of one readout row, a = weight · rows[row] + bias, for decoding one loop step at
   * a time. One float64 sum (gateLogits keeps four partial sums and stores float32), so this is
   * the same value up to rounding, not bit for bit. rows [M, D] row-major.
   */
  logitRow(rows: Float32Array, row: number): number {
    const w = this.weight.data;
    const D = this.dModel;
    const o = row * D;
    let acc = 0;
    for (let d = 0; d < D; d++) acc += w[d]! * rows[o + d]!;
    return acc + this.bias.data[0]!;
  }

  /** λ = sigmoid(a) [R, ...S]. */
  lambda(readouts: readonly Tensor[]): Tensor {
    return sigmoid(this.logits(readouts));
  }
}
