/**
 * `--precision` is one flag for every backend: each backend offers its precisions (cuda fp32,
 * tf32, bf16; webgpu fp32, mixed; the CPU backends fp32) and refuses the others in one line naming
 * what it offers, before the run is made (a backend over a recording device stands in for a
 * started GPU).
 */
import { recordingDevice } from "@loop/cuda";
import { resolveTrainOptions } from "@loop/train";
import { describe, expect, it } from "vitest";
import { type ComputeBackend, cpuBackendAsIs, cudaComputeBackend } from "../backend.js";
import { type TrainJob, trainJob } from "./run-training.js";

const task = { seqLen: 8 } as TrainJob["task"];
const job = (backend: ComputeBackend, precision: "mixed" | "bf16") =>
  ({ backend, task, train: resolveTrainOptions({ precision }) }) as TrainJob;

describe("--precision", () => {
  it("cuda refuses mixed, naming the precisions it offers", async () => {
    const cuda = cudaComputeBackend(recordingDevice());
    expect(cuda.caps.precisions).toEqual(["fp32", "tf32", "bf16"]);
    await expect(trainJob(job(cuda, "mixed"))).rejects.toThrow(
      /^--precision mixed is not offered by --backend cuda \(it offers fp32, tf32, bf16\)$/,
    );
  });

  it("a CPU backend refuses bf16: it trains in fp32", async () => {
    await expect(trainJob(job(cpuBackendAsIs(), "bf16"))).rejects.toThrow(
      /^--precision bf16 is not offered by --backend (native|portable) \(it offers fp32\)$/,
    );
  });
});
