/*
 * A kernel compiled on a device: its shader module (the subgroup variant where asked), an
 * explicit bind-group layout — binding 0 the parameters' uniform with a dynamic offset, so one
 * bind group serves a dispatch whatever arena slot its parameters land in; then the kernel's
 * buffers in order, read-only or read-write — and the compute pipeline.
 *
 * A WGSL error does not throw here: the pipeline is invalid and its dispatches are dropped. The
 * compilation runs in a validation error scope whose result (`checked`) names the kernel and the
 * compiler's message, for the context to report at its next read or sync.
 */
import type { Kernel } from "./kernel-def.js";
import { uniformBytes } from "./uniform-arenas.js";
import { ShaderStage } from "./usage.js";

export interface Compiled {
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  uniformBytes: number;
}

export function compileKernel(
  device: GPUDevice,
  kernel: Kernel,
  subgroupMinSize: number | null,
): { compiled: Compiled; checked: Promise<string | null> } {
  device.pushErrorScope("validation");
  const code =
    subgroupMinSize !== null && kernel.subgroupCode
      ? kernel.subgroupCode(subgroupMinSize)
      : kernel.code;
  const module = device.createShaderModule({ code, label: kernel.name });
  const layout = device.createBindGroupLayout({
    label: kernel.name,
    entries: [
      {
        binding: 0,
        visibility: ShaderStage.COMPUTE,
        buffer: { type: "uniform", hasDynamicOffset: true },
      },
      ...kernel.bufferWritable.map(
        (rw, i): GPUBindGroupLayoutEntry => ({
          binding: i + 1,
          visibility: ShaderStage.COMPUTE,
          buffer: { type: rw ? "storage" : "read-only-storage" },
        }),
      ),
    ],
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    label: kernel.name,
    compute: { module, entryPoint: kernel.entry },
  });
  const checked = device
    .popErrorScope()
    .then((err) =>
      err
        ? `kernel ${kernel.name} does not compile: ${err.message.split("\n").slice(0, 6).join(" ")}`
        : null,
    );
  return { compiled: { pipeline, layout, uniformBytes: uniformBytes(kernel) }, checked };
}
