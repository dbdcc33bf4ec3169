/**
 * The device of this package's WebGPU suites: @loop/test-support's gpuForTests with the Node
 * context of this package (passed in there, since that package sits below this one).
 */
import { gpuForTests as sharedGpuForTests } from "@loop/test-support";
import type { GpuContext } from "../index.js";
import { createNodeGpuContext } from "../node/index.js";

/** One context per test file, or null with one printed line naming why (a failure under CI). */
export const gpuForTests = (what: string): Promise<GpuContext | null> =>
  sharedGpuForTests(what, createNodeGpuContext);
