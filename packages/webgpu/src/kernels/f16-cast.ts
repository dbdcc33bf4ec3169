/**
 * Rounding f32 values to f16 (binary16) storage, for mixed-precision GEMM operands: two source
 * ranges (the two operands of one product) in one dispatch, each copied from its element offset
 * into its own output starting at element 0.
 *
 * WGSL leaves a conversion of a value outside f16's finite range indeterminate, and overflow must
 * show (the loss scale halves on it), so the edge cases are written by hand with IEEE semantics
 * under round-to-nearest: |x| ≥ 65520 → ±inf, 65504 < |x| < 65520 → ±65504, NaN → NaN. Every other
 * value is converted by the hardware (f16(x), or pack2x16float when f16 is stored two per u32).
 */
import { defineKernel, flatEntry, type Kernel } from "../kernel-def.js";
import type { F16Storage } from "../precision.js";

export const F16_CAST_GROUP = 256;

/** WGSL: the f16 bit pattern of an f32 (IEEE edges by hand, the rest through pack2x16float). */
const HALF_BITS_WGSL = `
fn halfBits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let sign = (b >> 16u) & 0x8000u;
  let mag = b & 0x7fffffffu;
  if (mag > 0x7f800000u) { return 0x7e00u; }            // NaN
  if (mag >= 0x477ff000u) { return sign | 0x7c00u; }    // |x| ≥ 65520 (and inf): ±inf
  if (mag > 0x477fe000u) { return sign | 0x7bffu; }     // 65504 < |x| < 65520: ±65504
  return pack2x16float(vec2f(x, 0.0)) & 0xffffu;
}`;

function castCode(storage: F16Storage): string {
  if (storage === "packed")
    return `${HALF_BITS_WGSL}
fn packWord(src: u32, off: u32, n: u32, w: u32) -> u32 {
  let i = 2u * w;
  var hi = 0u;
  if (i + 1u < n) { hi = halfBits(readSrc(src, off + i + 1u)); }
  return halfBits(readSrc(src, off + i)) | (hi << 16u);
}
fn readSrc(src: u32, i: u32) -> f32 {
  if (src == 0u) { return srcA[i]; }
  return srcB[i];
}
${flatEntry(F16_CAST_GROUP, "p.wordsA + p.wordsB")}
  if (i < p.wordsA) { outA[i] = packWord(0u, p.offA, p.nA, i); }
  else { outB[i - p.wordsA] = packWord(1u, p.offB, p.nB, i - p.wordsA); }
}`;
  return `${HALF_BITS_WGSL}
fn toHalf(x: f32) -> f16 {
  let h = halfBits(x);
  return bitcast<vec2<f16>>(h).x;
}
${flatEntry(F16_CAST_GROUP, "p.nA + p.nB")}
  if (i < p.nA) { outA[i] = toHalf(srcA[p.offA + i]); }
  else { outB[i - p.nA] = toHalf(srcB[p.offB + i - p.nA]); }
}`;
}

const kernels = new Map<F16Storage, Kernel>();

/**
 * outA[0..nA) = f16(srcA[offA..offA+nA)), likewise B. Packed: params wordsA = ⌈nA/2⌉ (the high
 * half of a last odd word is 0). Native: outputs are array<f16>.
 */
export function f16CastKernel(storage: F16Storage): Kernel {
  let k = kernels.get(storage);
  if (!k) {
    const out = storage === "packed" ? "rw:u32" : "rw:f16";
    k = defineKernel({
      name: `f16_cast_${storage}`,
      params: { offA: "u32", nA: "u32", offB: "u32", nB: "u32", wordsA: "u32", wordsB: "u32" },
      buffers: { srcA: "read", srcB: "read", outA: out, outB: out },
      body: castCode(storage),
      enable: storage === "native" ? ["f16"] : [],
    });
    kernels.set(storage, k);
  }
  return k;
}
