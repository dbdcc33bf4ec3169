/**
 * The device of the WebGPU suites: @loop/test-support's gpuForTests with the Node context of
 * @loop/webgpu (passed in there, since that package sits below @loop/webgpu).
 */
import { gpuForTests as sharedGpuForTests } from "@loop/test-support";
import type { GpuContext } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";

/** One context per test file, or null with one printed line naming why (a failure under CI). */
export const gpuForTests = (what: string): Promise<GpuContext | null> =>
  sharedGpuForTests(what, createNodeGpuContext);
