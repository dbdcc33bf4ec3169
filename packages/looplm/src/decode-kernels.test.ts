/**
 * The decode kernels (`DecodeOps`) of every backend against the CPU's decoding, one suite
 * (decode-kernels.test-util.ts): the CPU backends' own (`cpuBackendOps`), the CUDA kernels on
 * the host emulator (skipped with one printed line without a C++ compiler, a failure under CI)
 * and the WebGPU ones (SwiftShader here; skipped with one printed line where no adapter exists).
 */
import { cudaBackend } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import { cpuBackendOps } from "@loop/looped";
import { emulatorSuiteRuns } from "@loop/test-support";
import { gpuForTests } from "@loop/test-support-gpu";
import { gpuBackendOps } from "@loop/webgpu";
import { decodeKernelSuite } from "./decode-kernels.test-util.js";

decodeKernelSuite("cpu", true, () => cpuBackendOps);

const started = await startEmulatedDevice();
const cuda = emulatorSuiteRuns("the CUDA decode kernels on the host emulator", started);
decodeKernelSuite(
  "cuda (emulated)",
  cuda,
  () => cudaBackend(started.ok ? started.device : (null as never)).ops,
);

const ctx = await gpuForTests("the WebGPU decode kernels");
decodeKernelSuite("webgpu", ctx !== null, () => gpuBackendOps(ctx!));
