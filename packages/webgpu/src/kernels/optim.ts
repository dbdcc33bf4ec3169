/*
 * Optimiser kernels:
 *   adamw:       (flat grid over one parameter's n elements; with `clip`, g first takes the
 *                clipScale rule below, read from `norm`: the clipping costs no pass of its own)
 *                m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
 *                w ← w·decay − stepSize·m / (sqrt(v)·sc2 + eps)
 *                (decay = 1 − lr·wd or 1, stepSize = lr/(1−β1^t), sc2 = 1/sqrt(1−β2^t): the
 *                constants of @loop/tensor's AdamW, computed on the CPU in double)
 *   sumSquares:  parts[off + b] = Σ g[i]² over block b of SQ_BLOCK elements (one workgroup per
 *                block, a fixed-order tree: the same bits every run)
 *   normFinish:  norm[0] = sqrt(Σ_k parts[k]) over every block of every gradient (one workgroup,
 *                a fixed-order tree)
 *   clipScale:   g ← g·maxNorm/(norm + 1e-6) when norm is finite and > maxNorm, else unchanged
 */
import {
  type BufferSpec,
  defineKernel,
  flatEntry,
  flatIndex,
  type ParamType,
} from "../kernel-def.js";

export const OPTIM_GROUP = 256;
const head = flatEntry(OPTIM_GROUP);

/** WGSL: the clipping factor of gradient norm `nrm` (1 when not finite or within maxNorm). */
const CLIP_FACTOR = `
fn clipFactor(nrm: f32, maxNorm: f32) -> f32 {
  // Finite: the exponent bits are not all ones (NaN and ±Inf leave the gradients unscaled).
  let finite = (bitcast<u32>(nrm) & 0x7f800000u) != 0x7f800000u;
  if (finite && nrm > maxNorm) { return maxNorm / (nrm + 1e-6); }
  return 1.0;
}`;

/** The adamw kernel's parameters and buffers (step-guard.ts's guarded adamw adds a guard). */
export const ADAMW_PARAMS = {
  n: "u32",
  decay: "f32",
  stepSize: "f32",
  b1: "f32",
  b2: "f32",
  eps: "f32",
  sc2: "f32",
  clip: "u32",
  maxNorm: "f32",
} satisfies Record<string, ParamType>;
export const ADAMW_BUFFERS = {
  w: "rw",
  g: "read",
  m: "rw",
  v: "rw",
  norm: "read",
} satisfies Record<string, BufferSpec>;

/**
 * WGSL of the adamw kernel, `gate` (WGSL, may return early) run first for each element: the
 * guarded kernel shares the arithmetic, so a guarded step gives the bits of an unguarded one.
 */
export function adamwBody(gate = ""): string {
  return `${CLIP_FACTOR}
${head}${gate ? `\n  ${gate}` : ""}
  var gi = g[i];
  if (p.clip != 0u) {
    let f = clipFactor(norm[0], p.maxNorm);
    if (f != 1.0) { gi = gi * f; }
  }
  let mi = p.b1 * m[i] + (1.0 - p.b1) * gi;
  let vi = p.b2 * v[i] + (1.0 - p.b2) * gi * gi;
  m[i] = mi;
  v[i] = vi;
  w[i] = w[i] * p.decay - (p.stepSize * mi) / (sqrt(vi) * p.sc2 + p.eps);
}`;
}

export const adamwKernel = defineKernel({
  name: "adamw",
  params: ADAMW_PARAMS,
  buffers: ADAMW_BUFFERS,
  body: adamwBody(),
});

/** Threads of the sum-of-squares and finishing workgroups. */
const SQ_GROUP = 256;
/** Elements one sumSquares workgroup sums (16 per thread). */
export const SQ_BLOCK = SQ_GROUP * 16;

const TREE = `
  workgroupBarrier();
  for (var s = ${SQ_GROUP / 2}u; s > 0u; s = s / 2u) {
    if (lid.x < s) { acc[lid.x] = acc[lid.x] + acc[lid.x + s]; }
    workgroupBarrier();
  }`;

export const sumSquaresKernel = defineKernel({
  name: "sum_squares",
  params: { n: "u32", blocks: "u32", off: "u32" },
  buffers: { g: "read", parts: "rw" },
  body: `var<workgroup> acc: array<f32, ${SQ_GROUP}>;
@compute @workgroup_size(${SQ_GROUP})
fn main(@builtin(workgroup_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_id) lid: vec3u) {
  let b = ${flatIndex(1)};
  var s = 0.0;
  for (var k = 0u; k < ${SQ_BLOCK / SQ_GROUP}u; k++) {
    let i = b * ${SQ_BLOCK}u + k * ${SQ_GROUP}u + lid.x;
    if (i < p.n) { let x = g[i]; s += x * x; }
  }
  acc[lid.x] = s;${TREE}
  if (lid.x == 0u && b < p.blocks) { parts[p.off + b] = acc[0]; }
}`,
});

export const normFinishKernel = defineKernel({
  name: "norm_finish",
  params: { count: "u32" },
  buffers: { parts: "read", norm: "rw" },
  body: `var<workgroup> acc: array<f32, ${SQ_GROUP}>;
@compute @workgroup_size(${SQ_GROUP})
fn main(@builtin(local_invocation_id) lid: vec3u) {
  var s = 0.0;
  for (var k = lid.x; k < p.count; k += ${SQ_GROUP}u) { s += parts[k]; }
  acc[lid.x] = s;${TREE}
  if (lid.x == 0u) { norm[0] = sqrt(acc[0]); }
}`,
});

export const clipScaleKernel = defineKernel({
  name: "clip_scale",
  params: { n: "u32", maxNorm: "f32" },
  buffers: { norm: "read", g: "rw" },
  body: `${CLIP_FACTOR}
${head}
  let f = clipFactor(norm[0], p.maxNorm);
  if (f != 1.0) { g[i] = g[i] * f; }
}`,
});
