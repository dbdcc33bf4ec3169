/*
 * Elementwise kernels over flat f32 arrays of n elements (grid dispatch, 256 threads a group):
 *   fill:  out[i] = value
 *   copy:  out[i] = a[i]
 *   add:   out[i] = a[i] + b[i]   (a or b may be split-K partial sums, wgsl-partial-sum.ts:
 *          the residual add reads the output projection's GEMM that way)
 *   addInto: acc[i] += a[i]
 *   axpby: out[i] = alpha·a[i] + beta·b[i]
 *   affine: out[i] = alpha·a[i] + shift   (scale: shift 0)
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { partialSumParams, partialSumWgsl } from "./wgsl-partial-sum.js";

export const EW_GROUP = 256;
const head = flatEntry(EW_GROUP);

export const fillKernel = defineKernel({
  name: "fill",
  params: { n: "u32", value: "f32" },
  buffers: { out: "rw" },
  body: `${head}\n  out[i] = p.value;\n}`,
});

export const copyKernel = defineKernel({
  name: "copy",
  params: { n: "u32" },
  buffers: { a: "read", out: "rw" },
  body: `${head}\n  out[i] = a[i];\n}`,
});

export const addKernel = defineKernel({
  name: "add",
  params: { n: "u32", ...partialSumParams("a"), ...partialSumParams("b") },
  buffers: { a: "read", b: "read", out: "rw" },
  body: `${partialSumWgsl("aAt", "a")}\n${partialSumWgsl("bAt", "b")}\n${head}\n  out[i] = aAt(i) + bAt(i);\n}`,
});

export const addIntoKernel = defineKernel({
  name: "addInto",
  params: { n: "u32" },
  buffers: { a: "read", acc: "rw" },
  body: `${head}\n  acc[i] = acc[i] + a[i];\n}`,
});

export const axpbyKernel = defineKernel({
  name: "axpby",
  params: { n: "u32", alpha: "f32", beta: "f32" },
  buffers: { a: "read", b: "read", out: "rw" },
  body: `${head}\n  out[i] = p.alpha * a[i] + p.beta * b[i];\n}`,
});

export const affineKernel = defineKernel({
  name: "affine",
  params: { n: "u32", alpha: "f32", shift: "f32" },
  buffers: { a: "read", out: "rw" },
  body: `${head}\n  out[i] = p.alpha * a[i] + p.shift;\n}`,
});
