/*
 * The CPU backend's ops (`BackendOps` of @loop/tensor): the engine's general kernels, training
 * ops and autograd, the mixers' kernels and the decode kernels (`DecodeOps`), each package's
 * slice as it exports it. The CPU
 * classes (`LoopedModel`, `Layer`, the mixers, `ExitGate`) run the generic forward on these, so
 * their numbers are the ops' own, bit for bit; `toDevice(model, cpuBackendOps)` is a device
 * model on the CPU. These run on the kernels the kernel-set registry holds when they are called;
 * `cpuBackendOpsOn(kernels)` on a backend's own (two CPU backends side by side).
 */
import { cpuAttendStep, cpuAttentionOps } from "@loop/attention";
import { cpuMamba2Decode, cpuMamba2Ops } from "@loop/ssm-kernels";
import {
  type BackendOps,
  cpuTensorOps,
  cpuTrainOps,
  cpuTransferOps,
  type DecodeOps,
  type IntTensor,
  type Tensor,
} from "@loop/tensor";
import { type CpuKernels, withKernels } from "@loop/tensor/kernel";

/**
 * Every op the model, the tape and the optimiser need, on CPU tensors and the kernels in scope: the
 * CPU backend's `BackendOps`.
 */
export const cpuBackendOps: BackendOps<Tensor, IntTensor> & DecodeOps<Tensor, IntTensor> = {
  ...cpuTransferOps,
  ...cpuTrainOps,
  ...cpuTensorOps,
  ...cpuMamba2Ops,
  ...cpuAttentionOps,
  ...cpuMamba2Decode,
  ...cpuAttendStep,
};

/**
 * `cpuBackendOps` on `kernels` (`currentKernels()` when a backend started): every op, and the
 * backward through `ops.backward`, runs with them installed (`withKernels`).
 */
export function cpuBackendOpsOn(
  kernels: CpuKernels,
): BackendOps<Tensor, IntTensor> & DecodeOps<Tensor, IntTensor> {
  const on =
    (f: (...a: unknown[]) => unknown) =>
    (...a: unknown[]) =>
      withKernels(kernels, () => f(...a));
  const entries = Object.entries(cpuBackendOps).map(([k, v]) => [
    k,
    typeof v === "function" ? on(v as (...a: unknown[]) => unknown) : v,
  ]);
  return Object.fromEntries(entries) as BackendOps<Tensor, IntTensor> &
    DecodeOps<Tensor, IntTensor>;
}
