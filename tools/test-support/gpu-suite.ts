/**
 * A GPU context for the WebGPU test suites, or null with one printed line naming why none could
 * be made. Under CI (which installs Chromium's SwiftShader Vulkan driver and the Vulkan loader) a
 * missing adapter is a failure, never a silent pass (suite-runs.ts). vitest.config.ts points
 * VK_ICD_FILENAMES at SwiftShader when it is installed, so the suites' results do not depend on
 * the machine's GPU. The test passes in `createNodeGpuContext` of `@loop/webgpu/node`: this
 * package sits below @loop/webgpu (whose own tests use it).
 */
import { suiteRuns } from "./suite-runs.js";

let shared: Promise<unknown> | null = null;

/**
 * Whether a suite that needs a WebGPU adapter runs, given how starting one went: otherwise one
 * printed line naming why (a failure under CI).
 */
export function gpuSuiteRuns(
  what: string,
  started: { ok: true } | { ok: false; error: string },
): boolean {
  const whyNot = started.ok ? null : `no WebGPU adapter (${started.error})`;
  return suiteRuns(what, whyNot, "installs SwiftShader");
}

async function make<C>(what: string, create: () => Promise<C>): Promise<C | null> {
  try {
    return await create();
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    gpuSuiteRuns(what, { ok: false, error });
    return null;
  }
}

/**
 * One context per test file (device creation costs ~100 ms on SwiftShader), made by `create`
 * (`createNodeGpuContext`) the first time.
 */
export function gpuForTests<C>(what: string, create: () => Promise<C>): Promise<C | null> {
  shared ??= make(what, create);
  return shared as Promise<C | null>;
}
