/*
 * `DecodeOps` (@loop/tensor) on a WebGPU device: the two recurrent kernels decoding needs beyond
 * the model's ops, on states held on the device — the Mamba-2 mixer's one-token step
 * (ops/mamba2-step.ts) and attention over a KV cache (ops/attention-decode.ts). Part of what
 * `gpuModelOps` returns. Inference only: not recorded on the tape.
 */
import type { DecodeOps } from "@loop/tensor";
import type { GpuTensor } from "./gpu-tensor.js";
import { attendStep } from "./ops/attention-decode.js";
import { checkDecodeRows } from "./ops/decode-rows.js";
import { mamba2StepState } from "./ops/mamba2-step.js";

/** The decode kernels on GPU tensors (the device comes with the tensors). */
export function gpuDecodeOps(): DecodeOps<GpuTensor, GpuTensor> {
  return {
    mamba2Step(sizes, zx, state, w, opts = {}) {
      const rows = opts.rows ?? null;
      // (a zx of the wrong rank gets mamba2StepState's message)
      if (rows && zx.rank === 2)
        checkDecodeRows("webgpu mamba2Step", rows, zx.shape[0]!, state.ssm.shape[0]!);
      const out = mamba2StepState(sizes, zx, state, w, rows);
      if (!opts.absorb) return out;
      // (the kernels write y and z either way: they are a copy and a sum the state pass has)
      out.y.dispose();
      out.z.dispose();
      return null;
    },
    attendStep,
  };
}
