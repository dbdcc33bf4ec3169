/*
 * Rounding f32 values to f16 (binary16) storage, for mixed-precision GEMM operands: two source
 * ranges (the two operands of one product) in one dispatch, each copied from its element offset
 * into its own output starting at element 0.
 *
 * WGSL leaves a conversion of a value outside f16's finite range indeterminate, and overflow must
 * show (the loss scale halves on it), so the edge cases are written by hand with IEEE semantics
 * under round-to-nearest: |x| ≥ 65520 → ±inf, 65504 < |x| < 65520 → ±65504, NaN → NaN. Every other
 * value is converted by the hardware (pack2x16float).
 */
import { defineKernel, flatEntry, type Kernel } from "../kernel-def.js";

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

const CAST_WGSL = `${HALF_BITS_WGSL}
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

/**
 * outA[0..nA) = f16(srcA[offA..offA+nA)), likewise B, written as u32 words of two f16 each
 * (params wordsA = ⌈nA/2⌉; the high half of a last odd word is 0). Those are the bytes of an
 * array<f16> as well (element 2w in the low half, little-endian), so one kernel serves both
 * storages: the packed GEMM reads the words, the native one (shader-f16) reads the same buffer as
 * array<f16>, and the cast itself needs no shader-f16.
 */
export const f16CastKernel: Kernel = defineKernel({
  name: "f16_cast",
  params: { offA: "u32", nA: "u32", offB: "u32", nB: "u32", wordsA: "u32", wordsB: "u32" },
  buffers: { srcA: "read", srcB: "read", outA: "rw:u32", outB: "rw:u32" },
  body: CAST_WGSL,
});
