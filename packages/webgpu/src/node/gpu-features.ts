/*
 * GPU features that Dawn hides unless asked: on NVIDIA's Vulkan driver `shader-f16` needs the
 * toggle vulkan_enable_f16_on_nvidia, and the experimental subgroup-matrix feature needs
 * allow_unsafe_apis (it is guarded as unsafe) and use_vulkan_memory_model (its shaders use the
 * Vulkan memory model). The Node binding takes toggles as "enable-dawn-features=a,b" in
 * `create(flags)` (the `webgpu` package's README), for the instance, adapters and devices.
 */

/** The features `--gpu-features` accepts. */
export const GPU_FEATURES = ["f16", "subgroups", "subgroup-matrix"] as const;

/** One of GPU_FEATURES. */
export type GpuFeature = (typeof GPU_FEATURES)[number];

/** Dawn's name of the subgroup-matrix feature, asked for on the device when it is unlocked. */
export { SUBGROUP_MATRIX } from "../capabilities.js";

/** The Dawn toggles each feature needs (subgroups: none, Dawn exposes them where they exist). */
const TOGGLES: Record<GpuFeature, readonly string[]> = {
  f16: ["vulkan_enable_f16_on_nvidia"],
  subgroups: [],
  "subgroup-matrix": ["allow_unsafe_apis", "use_vulkan_memory_model"],
};

/** Dawn's `create` flags for `features`: one "enable-dawn-features=…" flag, or none. */
export function dawnFlags(features: readonly GpuFeature[]): string[] {
  const toggles = [...new Set(features.flatMap((f) => TOGGLES[f]))];
  return toggles.length > 0 ? [`enable-dawn-features=${toggles.join(",")}`] : [];
}

/** "f16,subgroup-matrix" as features; one sentence naming a feature it does not know. */
export function parseGpuFeatures(list: string): GpuFeature[] {
  const out: GpuFeature[] = [];
  for (const raw of list.split(",")) {
    const f = raw.trim();
    if (f === "") continue;
    if (!(GPU_FEATURES as readonly string[]).includes(f))
      throw new Error(
        `--gpu-features: unknown feature "${f}" (choose from ${GPU_FEATURES.join(", ")})`,
      );
    if (!out.includes(f as GpuFeature)) out.push(f as GpuFeature);
  }
  return out;
}
