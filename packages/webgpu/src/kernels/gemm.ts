/*
 * Tiled GEMM, one workgroup per BM×BN block of C, blocked through workgroup memory along K:
 *   C[b][m, n] = Σ_k op(A)[b][m, k] · op(B)[b][k, n]  (+ beta·C[b][m, n]) (+ bias[n])
 * op(A) = A or Aᵀ (transA: A is stored [K, M]), likewise op(B) (transB: B is stored [N, K]).
 * Matrices are row-major with leading dimensions lda/ldb/ldc and element offsets; batch entry b
 * (workgroup z) adds b·stride (stride 0 shares an operand across the batch). beta is 0 or 1:
 * with 0, C is never read (pooled buffers hold garbage, and 0·NaN is NaN).
 *
 * Split-K (splitK > 0, batch 1): workgroup z sums only K range z of the product into partial z
 * (C = the partials [S, M, N], no bias, beta 0); splitKSumKernel then adds the S partials in
 * order into the real C (+ bias, + beta·C). It gives the grid enough workgroups when M·N is small
 * and K large — the weight gradients gᵀ·x, whose K is every token of the batch.
 *
 * Each of the (BM/TM)·(BN/TN) = 256 threads owns TM×TN outputs, interleaved (rows ty + k·WY,
 * columns tx + k·WX) so that a warp reads consecutive workgroup-memory words and writes
 * consecutive columns of C. Tiles are loaded with consecutive threads on the operand's contiguous
 * axis (which axis that is depends on the transpose, fixed per kernel variant), so global loads
 * coalesce for every layout. Edge tiles are padded with zeros; every sum runs in k order.
 */
import { type BufferSpec, defineKernel, flatEntry, type Kernel } from "../kernel-def.js";
import { getOrMake } from "../memo.js";

/** A GEMM tiling: workgroup tile bm×bn, depth step bk, and per-thread tile tm×tn. */
export interface GemmTile {
  bm: number;
  bn: number;
  bk: number;
  tm: number;
  tn: number;
}

/** 64×64 blocks, 4×4 per thread, K in steps of 16: 8 KiB of workgroup memory. */
export const GEMM_TILE: GemmTile = { bm: 64, bn: 64, bk: 16, tm: 4, tn: 4 };

/**
 * 128×128 blocks, 8×8 per thread, K in steps of 8: twice the reuse per workgroup-memory load,
 * for products large enough to keep the GPU busy with a quarter as many workgroups (the pick
 * rule is `gemmTileFor` in ops/gemm.ts).
 */
export const GEMM_TILE_LARGE: GemmTile = { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 };

/**
 * How a kernel variant reads one operand: "f32" one element per load; "vec4" four consecutive
 * elements of the operand's contiguous axis per load (needs the operand's offset, leading
 * dimension and batch stride to be multiples of 4, see `vec4Ok`); "f16" native f16 storage;
 * "f16packed" two f16 per u32 word. Every form feeds the same f32 tile, so the sums are the same.
 */
export type GemmLoad = "f32" | "vec4" | "f16" | "f16packed";

/** Whether an operand's layout allows vec4 loads: 16-byte aligned rows and batch entries. */
export function vec4Ok(off: number, ld: number, stride: number): boolean {
  return off % 4 === 0 && ld % 4 === 0 && stride % 4 === 0;
}

/**
 * WGSL that loads operand X's tile (X = A or B) into workgroup memory `dst` (k-major, row
 * stride `sd`). `outer` is the tile's non-K side (bm or bn), `gOuter`/`limit` the global index
 * and bound along it; `contiguousK` says whether X's rows run along K (A untransposed, B
 * transposed) or along the outer axis.
 */
function tileLoad(
  X: "A" | "B",
  load: GemmLoad,
  contiguousK: boolean,
  t: GemmTile,
  outer: number,
  threads: number,
  segmented = false,
): string {
  const dst = X === "A" ? "As" : "Bs";
  const sd = outer + 1;
  const base = X === "A" ? "aBase" : "bBase";
  const ld = X === "A" ? "p.lda" : "p.ldb";
  const o0 = X === "A" ? "m0" : "n0";
  const limit = X === "A" ? "p.M" : "p.N";
  const idx = contiguousK ? `go * ${ld} + gk` : `gk * ${ld} + go`;
  if (load === "vec4") {
    const per = (outer * t.bk) / 4 / threads;
    // e-th vec4 of the tile, consecutive e along the contiguous axis
    const coord = contiguousK
      ? `let kk = (e % ${t.bk / 4}u) * 4u; let oo = e / ${t.bk / 4}u;`
      : `let oo = (e % ${outer / 4}u) * 4u; let kk = e / ${outer / 4}u;`;
    // components past the matrix's edge along the contiguous axis read as 0
    const inside = contiguousK ? "gk + c < kEnd" : `go + c < ${limit}`;
    const store = contiguousK ? `${dst}[(kk + c) * ${sd}u + oo]` : `${dst}[kk * ${sd}u + oo + c]`;
    return `
    for (var l = 0u; l < ${per}u; l++) {
      let e = li + l * ${threads}u;
      ${coord}
      let go = ${o0} + oo;
      let gk = k0 + kk;
      var v = vec4f(0.0);
      if (go < ${limit} && gk < kEnd) { v = ${X}[(${base} + ${idx}) / 4u]; }
      for (var c = 0u; c < 4u; c++) {
        var x = 0.0;
        if (${inside}) { x = v[c]; }
        ${store} = x;
      }
    }`;
  }
  const coord = contiguousK
    ? `let kk = e % ${t.bk}u; let oo = e / ${t.bk}u;`
    : `let oo = e % ${outer}u; let kk = e / ${outer}u;`;
  const read =
    load === "f32"
      ? `${X}[g]`
      : load === "f16"
        ? `f32(${X}[g])`
        : `unpack2x16float(${X}[g >> 1u])[g & 1u]`;
  // a segmented operand: its reader picks the piece from the stored (row, column)
  const fetch = segmented
    ? `v = seg${X}(${contiguousK ? "go, gk" : "gk, go"});`
    : `let g = ${base} + ${idx}; v = ${read};`;
  return `
    for (var l = 0u; l < ${(outer * t.bk) / threads}u; l++) {
      let e = li + l * ${threads}u;
      ${coord}
      let go = ${o0} + oo;
      let gk = k0 + kk;
      var v = 0.0;
      if (go < ${limit} && gk < kEnd) { ${fetch} }
      ${dst}[kk * ${sd}u + oo] = v;
    }`;
}

/**
 * An operand stored as up to three pieces, each in its own buffer, laid end to end along one of
 * its stored axes ("rows" or "cols"): piece s covers [b_s, b_{s+1}) of that axis (b_0 = 0,
 * bounds b_1, b_2 in the params `<X>b1`, `<X>b2`) at element offset `<X>o<s>`, leading dimension
 * `<X>l<s>`. It lets one GEMM read or write the three blocks of a split linear layer (in_proj's
 * z | xBC | dt, attention's q | k | v) where they live, with no copy and no dispatch per block.
 */
export type GemmSegAxis = "rows" | "cols";
export interface GemmSegments {
  A?: GemmSegAxis;
  B?: GemmSegAxis;
  C?: GemmSegAxis;
}
const PIECES = ["", "1", "2"] as const;

/** The buffer names and params of a segmented operand X. */
function segDecl(X: "A" | "B" | "C"): {
  params: Record<string, "u32" | "f32">;
  buffers: string[];
} {
  const params: Record<string, "u32" | "f32"> = { [`${X}b1`]: "u32", [`${X}b2`]: "u32" };
  for (let s = 0; s < 3; s++) {
    params[`${X}o${s}`] = "u32";
    params[`${X}l${s}`] = "u32";
    // C: each piece is overwritten or added to on its own (a weight gradient may exist or not)
    if (X === "C") params[`${X}beta${s}`] = "f32";
  }
  return { params, buffers: PIECES.map((k) => `${X}${k}`) };
}

/** WGSL: the element index of stored (r, c) in piece s of X, and the piece's buffer name. */
function segIndex(X: string, axis: GemmSegAxis, s: number): string {
  const lo = s === 0 ? "0u" : `p.${X}b${s}`;
  const [r, c] = axis === "rows" ? [`(r - ${lo})`, "c"] : ["r", `(c - ${lo})`];
  return `p.${X}o${s} + ${r} * p.${X}l${s} + ${c}`;
}

/** WGSL: `segX(r, c)`, the value at stored (r, c) of segmented operand X (A or B). */
function segReader(X: "A" | "B", axis: GemmSegAxis): string {
  const at = axis === "rows" ? "r" : "c";
  return `
fn seg${X}(r: u32, c: u32) -> f32 {
  if (${at} < p.${X}b1) { return ${X}[${segIndex(X, axis, 0)}]; }
  if (${at} < p.${X}b2) { return ${X}1[${segIndex(X, axis, 1)}]; }
  return ${X}2[${segIndex(X, axis, 2)}];
}`;
}

/** WGSL: `segC(r, c, v)` stores v (+ the piece's beta times its old value) at C's (r, c). */
function segWriter(axis: GemmSegAxis): string {
  const at = axis === "rows" ? "r" : "c";
  const piece = (s: number) => {
    const name = `C${PIECES[s]}`;
    return `{
    let i = ${segIndex("C", axis, s)};
    var w = v;
    if (p.Cbeta${s} != 0.0) { w += p.Cbeta${s} * ${name}[i]; }
    ${name}[i] = w;
    return;
  }`;
  };
  return `
fn segC(r: u32, c: u32, v: f32) {
  if (${at} < p.Cb1) ${piece(0)}
  if (${at} < p.Cb2) ${piece(1)}
  ${piece(2)}
}`;
}

function gemmKernelCode(
  transA: boolean,
  transB: boolean,
  t: GemmTile,
  loadA: GemmLoad,
  loadB: GemmLoad,
  seg: GemmSegments = {},
): string {
  const wx = t.bn / t.tn;
  const wy = t.bm / t.tm;
  const threads = wx * wy;
  // vec4 loads: each thread loads whole vectors of the tile
  const v = loadA === "vec4" || loadB === "vec4" ? 4 : 1;
  if (
    threads !== 256 ||
    (t.bm * t.bk) % (threads * v) ||
    (t.bn * t.bk) % (threads * v) ||
    (v === 4 && (t.bk % 4 || t.bm % 4 || t.bn % 4))
  )
    throw new Error(`webgpu gemm: tile ${JSON.stringify(t)} does not map onto 256 threads`);
  // Workgroup tiles stored k-major (As[k][m], Bs[k][n]) and padded by one word per row so that
  // the transposing stores of the row-major loads hit distinct banks.
  const sa = t.bm + 1;
  const sb = t.bn + 1;
  const helpers = [
    seg.A ? segReader("A", seg.A) : "",
    seg.B ? segReader("B", seg.B) : "",
    seg.C ? segWriter(seg.C) : "",
  ].join("");
  // a segmented C: each piece with its own beta (bias is not offered with pieces)
  const store = seg.C
    ? `segC(gm, gn, acc[i * ${t.tn}u + j]);`
    : `let c = cBase + gm * p.ldc + gn;
      var v = acc[i * ${t.tn}u + j];
      if (p.hasBias != 0u) { v += bias[gn]; }
      if (p.beta != 0.0) { v += p.beta * C[c]; }
      C[c] = v;`;
  return `${helpers}
var<workgroup> As: array<f32, ${t.bk * sa}>;
var<workgroup> Bs: array<f32, ${t.bk * sb}>;

@compute @workgroup_size(${threads})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3u) {
  let tx = li % ${wx}u;
  let ty = li / ${wx}u;
  let m0 = wg.y * ${t.bm}u;
  let n0 = wg.x * ${t.bn}u;
  let aBase = p.offA + wg.z * p.strideA;
  let bBase = p.offB + wg.z * p.strideB;
  let cBase = p.offC + wg.z * p.strideC;
  // Split-K: workgroup z takes the K range [z·splitK, (z+1)·splitK) (strides A, B are 0 then).
  var kBegin = 0u;
  var kEnd = p.K;
  if (p.splitK != 0u) {
    kBegin = wg.z * p.splitK;
    kEnd = min(p.K, kBegin + p.splitK);
  }
  var acc: array<f32, ${t.tm * t.tn}>;
  for (var i = 0u; i < ${t.tm * t.tn}u; i++) { acc[i] = 0.0; }
  for (var k0 = kBegin; k0 < kEnd; k0 += ${t.bk}u) {${tileLoad("A", loadA, !transA, t, t.bm, threads, !!seg.A)}${tileLoad("B", loadB, transB, t, t.bn, threads, !!seg.B)}
    workgroupBarrier();
    for (var kk = 0u; kk < ${t.bk}u; kk++) {
      var a: array<f32, ${t.tm}>;
      var b: array<f32, ${t.tn}>;
      for (var i = 0u; i < ${t.tm}u; i++) { a[i] = As[kk * ${sa}u + ty + i * ${wy}u]; }
      for (var j = 0u; j < ${t.tn}u; j++) { b[j] = Bs[kk * ${sb}u + tx + j * ${wx}u]; }
      for (var i = 0u; i < ${t.tm}u; i++) {
        for (var j = 0u; j < ${t.tn}u; j++) {
          acc[i * ${t.tn}u + j] = fma(a[i], b[j], acc[i * ${t.tn}u + j]);
        }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < ${t.tm}u; i++) {
    let gm = m0 + ty + i * ${wy}u;
    if (gm >= p.M) { continue; }
    for (var j = 0u; j < ${t.tn}u; j++) {
      let gn = n0 + tx + j * ${wx}u;
      if (gn >= p.N) { continue; }
      ${store}
    }
  }
}`;
}

const variants = new Map<string, Kernel>();

const LOAD_SPEC: Record<GemmLoad, "read" | "read:vec4f" | "read:f16" | "read:u32"> = {
  f32: "read",
  vec4: "read:vec4f",
  f16: "read:f16",
  f16packed: "read:u32",
};

/**
 * The GEMM kernel for one transpose combination, tile and operand loads (compiled once per
 * context).
 */
export function gemmKernel(
  transA: boolean,
  transB: boolean,
  tile: GemmTile = GEMM_TILE,
  loadA: GemmLoad = "f32",
  loadB: GemmLoad = "f32",
  seg: GemmSegments = {},
): Kernel {
  const segKey = (["A", "B", "C"] as const)
    .filter((X) => seg[X])
    .map((X) => `${X}${seg[X] === "rows" ? "r" : "c"}`)
    .join("");
  const key = `${transA ? "T" : "N"}${transB ? "T" : "N"}:${tile.bm}x${tile.bn}x${tile.bk}/${tile.tm}x${tile.tn}:${loadA},${loadB}${segKey ? `:seg${segKey}` : ""}`;
  return getOrMake(variants, key, () => {
    if ((seg.A && loadA !== "f32") || (seg.B && loadB !== "f32"))
      throw new Error(`webgpu gemm ${key}: a segmented operand takes scalar f32 loads`);
    const params: Record<string, "u32" | "f32"> = {
      M: "u32",
      N: "u32",
      K: "u32",
      lda: "u32",
      ldb: "u32",
      ldc: "u32",
      offA: "u32",
      offB: "u32",
      offC: "u32",
      strideA: "u32",
      strideB: "u32",
      strideC: "u32",
      beta: "f32",
      hasBias: "u32",
      splitK: "u32",
    };
    const buffers: Record<string, BufferSpec> = {};
    for (const X of ["A", "B"] as const) {
      const spec = LOAD_SPEC[X === "A" ? loadA : loadB];
      if (!seg[X]) buffers[X] = spec;
      else {
        const d = segDecl(X);
        Object.assign(params, d.params);
        for (const name of d.buffers) buffers[name] = spec;
      }
    }
    buffers.bias = "read";
    if (!seg.C) buffers.C = "rw";
    else {
      const d = segDecl("C");
      Object.assign(params, d.params);
      for (const name of d.buffers) buffers[name] = "rw";
    }
    return defineKernel({
      name: `gemm_${key}`,
      params,
      buffers,
      body: gemmKernelCode(transA, transB, tile, loadA, loadB, seg),
      enable: loadA === "f16" || loadB === "f16" ? ["f16"] : [],
    });
  });
}

export const SPLITK_GROUP = 256;

/** C[m, n] = Σ_s P[s, m, n] (s in order) + bias[n] (hasBias) + beta·C[m, n]; C at offC, ldc. */
export const splitKSumKernel = defineKernel({
  name: "gemm_splitk_sum",
  params: { M: "u32", N: "u32", S: "u32", ldc: "u32", offC: "u32", beta: "f32", hasBias: "u32" },
  buffers: { P: "read", bias: "read", C: "rw" },
  body: `${flatEntry(SPLITK_GROUP, "p.M * p.N")}
  let n = i % p.N;
  var v = 0.0;
  for (var s = 0u; s < p.S; s++) { v += P[s * p.M * p.N + i]; }
  if (p.hasBias != 0u) { v += bias[n]; }
  let c = p.offC + (i / p.N) * p.ldc + n;
  if (p.beta != 0.0) { v += p.beta * C[c]; }
  C[c] = v;
}`,
});
