/*
 * The chunked SSD backward on the native kernels (native/ssd.c, docs/model.md §3.5): the head pass
 * (reverse chunk recurrence per (batch, head)) and the group pass (per (batch, chunk, group)
 * sums), with the same inputs and outputs as the portable passes of ssd-chunked-backward.ts.
 */
import { allocF32Uninit, optionalArg, withTemporaries } from "@loop/tensor/kernel";
import {
  type ChunkDims,
  nativeSizes,
  type SsdChunkedSaved,
  type SsdNativeSizes,
} from "./ssd-chunked-forward.js";
import type { SsdArrays, SsdGrads } from "./ssd-shape.js";

/**
 * Native twin of the head pass (native/ssd.c `backwardHeads`): writes gx, gdt, gA [H], gs0 (when
 * given), the per-head partials gBh, gCh and (with gy) dCB, d(C·Bᵀ) per head as packed lower
 * triangles [B,nc,H,Lc(Lc+1)/2]; every element, so none need zeroing. The optional last
 * argument is `SsdArrays.resets`.
 */
export type SsdBackwardHeadsNative = (
  x: Float32Array,
  dt: Float32Array,
  A: Float32Array,
  B: Float32Array,
  C: Float32Array,
  hasS0: boolean,
  gy: Float32Array | null,
  gState: Float32Array | null,
  chunkStates: Float32Array,
  cb: Float32Array,
  gx: Float32Array,
  gdt: Float32Array,
  gA: Float32Array,
  gs0: Float32Array | null,
  gBh: Float32Array,
  gCh: Float32Array,
  dCB: Float32Array | null,
  D: Float32Array | null,
  gD: Float32Array | null,
  ...sizesAndResets: [...SsdNativeSizes] | [...SsdNativeSizes, Float32Array]
) => void;

/** Native twin of the group pass (native/ssd.c `backwardGroups`): writes gB and gC. */
export type SsdBackwardGroupsNative = (
  B: Float32Array,
  C: Float32Array,
  gBh: Float32Array,
  gCh: Float32Array,
  dCB: Float32Array | null,
  gB: Float32Array,
  gC: Float32Array,
  ...sizes: SsdNativeSizes
) => void;

/** Both passes in native/ssd.c; the per-head partials are (unzeroed) pooled temporaries. */
export function backwardNative(
  heads: SsdBackwardHeadsNative,
  groups: SsdBackwardGroupsNative,
  d: ChunkDims,
  a: SsdArrays,
  saved: SsdChunkedSaved,
  gy: Float32Array | null,
  gState: Float32Array | null,
): SsdGrads {
  const { batch, T, H, N, Lc, nc } = d;
  // every element written by the native passes
  const gx = allocF32Uninit(a.x.length);
  const gdt = allocF32Uninit(a.dt.length);
  const gA = new Float32Array(H);
  const gs0 = a.s0 ? new Float32Array(a.s0.length) : null;
  const gD = a.D ? new Float32Array(H) : null;
  const gB = allocF32Uninit(a.B.length);
  const gC = allocF32Uninit(a.C.length);
  withTemporaries(() => {
    const gBh = allocF32Uninit(batch * T * H * N);
    const gCh = allocF32Uninit(batch * T * H * N);
    // d(C·Bᵀ) per head as packed lower triangles (native/ssd.c's own layout)
    const dCB = gy ? allocF32Uninit((batch * nc * H * Lc * (Lc + 1)) / 2) : null;
    heads(
      a.x,
      a.dt,
      a.A,
      a.B,
      a.C,
      a.s0 !== null,
      gy,
      gState,
      saved.chunkStates,
      saved.cb,
      gx,
      gdt,
      gA,
      gs0,
      gBh,
      gCh,
      dCB,
      a.D ?? null,
      gD,
      ...nativeSizes(d),
      ...optionalArg(a.resets ?? null),
    );
    groups(a.B, a.C, gBh, gCh, dCB, gB, gC, ...nativeSizes(d));
  });
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0, D: gD };
}
