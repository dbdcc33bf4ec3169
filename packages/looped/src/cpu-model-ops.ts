/**
 * `ModelOps` (@loop/tensor) on the CPU: the engine's general ops and the fused ops of the mixers
 * and the exit gate, each package's slice as it exports it. The CPU classes (`LoopedModel`,
 * `Layer`, the mixers, `ExitGate`) run the generic forward on these, so their numbers are the
 * ops' own, bit for bit; `toDevice(model, cpuModelOps)` is a device model on the CPU.
 */
import { cpuAttentionOps } from "@loop/attention";
import { cpuExitGateOps } from "@loop/exit-gate";
import { cpuMamba2Ops } from "@loop/ssm-kernels";
import {
  cpuTensorOps,
  cpuTransferOps,
  type IntTensor,
  type ModelOps,
  type Tensor,
} from "@loop/tensor";

export const cpuModelOps: ModelOps<Tensor, IntTensor> = {
  ...cpuTransferOps,
  ...cpuTensorOps,
  ...cpuMamba2Ops,
  ...cpuAttentionOps,
  ...cpuExitGateOps,
};
