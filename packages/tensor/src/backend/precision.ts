/*
 * The arithmetic of a backend's matrix products, one vocabulary for every backend (each states
 * which it offers; `--precision` takes any and a backend refuses by name what it lacks):
 *   fp32   exact fp32 products (every backend)
 *   tf32   fp32 operands rounded to tf32 on tensor cores, fp32 accumulation (cuda)
 *   bf16   bf16 operands, fp32 accumulation (cuda)
 *   mixed  f16 operands, f32 accumulation, dynamic loss scaling in training (webgpu)
 * Master weights, optimiser moments, gradients, norms, scan states and losses stay fp32 at
 * every precision.
 */

/** Every precision a backend may offer (see the file comment). */
export const PRECISIONS = ["fp32", "tf32", "bf16", "mixed"] as const;
/** One of PRECISIONS. */
export type Precision = (typeof PRECISIONS)[number];
