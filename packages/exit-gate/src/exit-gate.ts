/**
 * The exit gate module (docs/exit-gate.md): λ(r) = sigmoid(weight · readout(r) + bias) per loop step
 * and token. Parameters, named relative to the gate (the model prefixes "exit_gate."):
 *   weight [1, D], bias [1]   (docs/model.md §6 names exit_gate.weight, exit_gate.bias)
 * Init: weight ~ U(−1/√D, 1/√D) (PyTorch's nn.Linear bound, as Ouro's gate), bias = 0, so on
 * normed readouts λ starts near 1/2 with a small per-token spread. Both are weight-decayed like
 * any other linear layer except the bias (decay false, as every bias in docs/model.md §3).
 */
import {
  type Module,
  type NamedParameter,
  parameter,
  type Rng,
  sigmoid,
  type Tensor,
} from "@loop/tensor";
import { gateLogits } from "./gate-logits.js";

export interface ExitGateConfig {
  dModel: number;
}

export class ExitGate implements Module {
  readonly dModel: number;
  readonly weight: Tensor;
  readonly bias: Tensor;

  constructor(config: ExitGateConfig, opts: { rng: Rng }) {
    const D = config.dModel;
    if (!Number.isInteger(D) || D < 1) {
      throw new Error(`ExitGate: dModel must be a positive integer, got ${D}`);
    }
    this.dModel = D;
    const bound = 1 / Math.sqrt(D);
    const w = new Float32Array(D);
    opts.rng.fillUniform(w, -bound, bound);
    this.weight = parameter(w, [1, D], "weight");
    this.bias = parameter(new Float32Array(1), [1], "bias");
  }

  parameters(): NamedParameter[] {
    return [
      { name: "weight", tensor: this.weight, decay: true },
      { name: "bias", tensor: this.bias, decay: false },
    ];
  }

  /** Gate logits a [R, ...S] from readouts R × [...S, D]. */
  logits(readouts: readonly Tensor[]): Tensor {
    return gateLogits(readouts, this.weight, this.bias);
  }

  /** λ = sigmoid(a) [R, ...S]. */
  lambda(readouts: readonly Tensor[]): Tensor {
    return sigmoid(this.logits(readouts));
  }
}
