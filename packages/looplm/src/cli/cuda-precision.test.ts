/**
 * `--precision mixed` (webgpu's fp16 with loss scaling) on the cuda backend is refused in one
 * line naming cuda's own setting, before the run is made (a backend over a recording device
 * stands in for a started GPU).
 */
import { cudaBackend, recordingDevice } from "@loop/cuda";
import { currentKernels } from "@loop/tensor/kernel";
import { resolveTrainOptions } from "@loop/train";
import { describe, expect, it } from "vitest";
import type { ComputeBackend } from "../backend.js";
import { type TrainJob, trainJob } from "./run-training.js";

describe("--precision on cuda", () => {
  it("refuses mixed, naming LOOPLM_CUDA_PRECISION", async () => {
    const backend: ComputeBackend = {
      name: "cuda",
      gpu: null,
      onDevice: true,
      ops: cudaBackend(recordingDevice()).ops as ComputeBackend["ops"],
      kernels: currentKernels(),
      stop: () => {},
    };
    const task = { seqLen: 8 } as TrainJob["task"];
    const job = { backend, task, train: resolveTrainOptions({ precision: "mixed" }) } as TrainJob;
    await expect(trainJob(job)).rejects.toThrow(
      /^--precision mixed is webgpu's \(fp16 with loss scaling\); cuda's GEMM precision is LOOPLM_CUDA_PRECISION=fp32\|tf32\|bf16$/,
    );
  });
});
