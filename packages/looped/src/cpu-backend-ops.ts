/**
 * The CPU backend's ops (`BackendOps` of @loop/tensor): the engine's general and training ops and
 * the fused ops of the mixers and the exit gate, each package's slice as it exports it. The CPU
 * classes (`LoopedModel`, `Layer`, the mixers, `ExitGate`) run the generic forward on these, so
 * their numbers are the ops' own, bit for bit; `toDevice(model, cpuBackendOps)` is a device
 * model on the CPU.
 */
import { cpuAttentionOps } from "@loop/attention";
import { cpuExitGateOps } from "@loop/exit-gate";
import { cpuMamba2Ops } from "@loop/ssm-kernels";
import {
  type BackendOps,
  cpuTensorOps,
  cpuTrainOps,
  cpuTransferOps,
  type IntTensor,
  type Tensor,
} from "@loop/tensor";

export const cpuBackendOps: BackendOps<Tensor, IntTensor> = {
  ...cpuTransferOps,
  ...cpuTrainOps,
  ...cpuTensorOps,
  ...cpuMamba2Ops,
  ...cpuAttentionOps,
  ...cpuExitGateOps,
};
