/*
 * Shape contract shared by both SSD scan implementations (docs/model.md §3.5):
 *   x [B,T,H,P], dt [B,T,H], A [H], B and C [B,T,G,N], optional initial state [B,H,P,N]
 *   → y [B,T,H,P] and final state [B,H,P,N]. Head h reads group g = floor(h·G/H).
 */
import { shapeStr, type Tensor } from "@loop/tensor";

/** Sizes of an SSD scan: batch, length, heads, head size P, groups and state size N. */
export interface SsdShape {
  batch: number;
  seqLen: number;
  nHeads: number;
  headdim: number;
  nGroups: number;
  dState: number;
}

/** Raw inputs of a scan; `s0` null means a zero initial state. */
export interface SsdArrays {
  x: Float32Array;
  dt: Float32Array;
  A: Float32Array;
  B: Float32Array;
  C: Float32Array;
  s0: Float32Array | null;
  /** The D skip [H] (y += D_h·x), fused into the scan; absent or null: none. */
  D?: Float32Array | null;
  /**
   * Per position, [B·T]: non-zero where a document starts (the state carried into that
   * position is dropped, `documentResets`); absent or null: one document per row.
   */
  resets?: Float32Array | null;
}

/**
 * Gradients of a scan with respect to each input, shaped like it (`s0` null when there was no
 * initial state, `D` present when the arrays had a D skip).
 */
export type SsdGrads = Omit<SsdArrays, "resets">;

function expectShape(op: string, name: string, t: Tensor, want: readonly number[]): void {
  if (t.rank !== want.length || t.shape.some((d, i) => d !== want[i])) {
    throw new Error(`${op}: ${name} must have shape ${shapeStr(want)}, got ${shapeStr(t.shape)}`);
  }
}

/** Validate the scan inputs and return their sizes. */
export function ssdShape(
  op: string,
  x: Tensor,
  dt: Tensor,
  A: Tensor,
  B: Tensor,
  C: Tensor,
  initialState?: Tensor | null,
): SsdShape {
  if (x.rank !== 4) throw new Error(`${op}: x must be [B,T,H,P], got ${shapeStr(x.shape)}`);
  const [batch, seqLen, nHeads, headdim] = x.shape as [number, number, number, number];
  if (B.rank !== 4) throw new Error(`${op}: B must be [B,T,G,N], got ${shapeStr(B.shape)}`);
  const nGroups = B.shape[2]!;
  const dState = B.shape[3]!;
  expectShape(op, "dt", dt, [batch, seqLen, nHeads]);
  expectShape(op, "A", A, [nHeads]);
  expectShape(op, "B", B, [batch, seqLen, nGroups, dState]);
  expectShape(op, "C", C, [batch, seqLen, nGroups, dState]);
  if (nGroups < 1 || nHeads % nGroups !== 0) {
    throw new Error(
      `${op}: number of heads H=${nHeads} must be divisible by number of groups G=${nGroups}`,
    );
  }
  if (initialState) {
    expectShape(op, "initialState", initialState, [batch, nHeads, headdim, dState]);
  }
  return { batch, seqLen, nHeads, headdim, nGroups, dState };
}
