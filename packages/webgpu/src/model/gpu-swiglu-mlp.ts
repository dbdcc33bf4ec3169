/**
 * The SwiGLU MLP (docs/model.md §5) on the device, as `SwiGluMlp.forward` (@loop/attention):
 * x → down_proj(silu(gate_proj(x)) ⊙ up_proj(x)).
 */
import type { GpuTensor } from "../gpu-tensor.js";
import { linear } from "../ops/matmul.js";
import { swiglu } from "../ops/swiglu.js";
import type { GpuParameters } from "./gpu-parameters.js";

export class GpuSwiGluMlp {
  private readonly gateProj: GpuTensor;
  private readonly upProj: GpuTensor;
  private readonly downProj: GpuTensor;

  constructor(params: GpuParameters, prefix: string) {
    this.gateProj = params.get(`${prefix}gate_proj.weight`);
    this.upProj = params.get(`${prefix}up_proj.weight`);
    this.downProj = params.get(`${prefix}down_proj.weight`);
  }

  forward(x: GpuTensor): GpuTensor {
    return linear(swiglu(linear(x, this.gateProj), linear(x, this.upProj)), this.downProj);
  }
}
