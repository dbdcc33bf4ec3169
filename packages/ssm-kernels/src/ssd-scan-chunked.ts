/*
 * Differentiable chunked SSD scan (docs/model.md §3.5; the D skip y += D_h·x optional, fused): the op
 * the Mamba-2 mixer trains with. Forward in ssd-chunked-forward.ts, hand-written backward in ssd-chunked-backward.ts;
 * it computes exactly what ssd-scan-ref.ts computes, for any T and chunk size.
 * Shapes: x [B,T,H,P], dt [B,T,H], A [H], B/C [B,T,G,N], initial state [B,H,P,N]
 *   → y [B,T,H,P], final state [B,H,P,N].
 */
import { isGradEnabled, shapeStr, type Tensor } from "@loop/tensor";
import { documentResets } from "@loop/tensor/kernel";
import { ssdChunkedBackward } from "./ssd-chunked-backward.js";
import { ssdChunkedForward } from "./ssd-chunked-forward.js";
import {
  recordScan,
  type SsdScanOptions,
  type SsdScanResult,
  scanArrays,
  tapeInputs,
} from "./ssd-scan-ref.js";
import { type SsdArrays, ssdShape } from "./ssd-shape.js";

/**
 * Options of the chunked SSD scan: chunk length, fused D skip and packed documents, besides the
 * initial state.
 */
export interface SsdChunkedOptions extends SsdScanOptions {
  /** Chunk length (default 64). */
  chunkSize?: number;
  /**
   * The Mamba-2 D skip [H], fused: y = SSD(…) + D_h·x (= addDSkip(y, x, D) without its passes
   * over y and x, and with ∂D from the scan's backward).
   */
  D?: Tensor | null;
  /**
   * Packed documents: [B·T] document index per position (mamba_ssm's seq_idx, non-decreasing
   * along a row); the state is reset where it changes (@loop/tensor's packed-documents.ts).
   * Absent: one document per row.
   */
  seqIdx?: Int32Array | null;
}

/**
 * The Mamba-2 SSD scan in chunks (docs/model.md): y [B,T,H,P] and the final state [B,H,P,N] from x
 * [B,T,H,P], dt [B,T,H], A [H], B and C [B,T,G,N]; differentiable.
 */
export function ssdScanChunked(
  x: Tensor,
  dt: Tensor,
  A: Tensor,
  B: Tensor,
  C: Tensor,
  opts: SsdChunkedOptions = {},
): SsdScanResult {
  const chunkSize = opts.chunkSize ?? 64;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new Error(`ssdScanChunked: chunkSize must be a positive integer, got ${chunkSize}`);
  }
  const s0 = opts.initialState ?? null;
  const D = opts.D ?? null;
  const s = ssdShape("ssdScanChunked", x, dt, A, B, C, s0);
  if (D && (D.rank !== 1 || D.size !== s.nHeads)) {
    throw new Error(`ssdScanChunked: D must be [${s.nHeads}], got ${shapeStr(D.shape)}`);
  }
  const t = { x, dt, A, B, C, s0, D };
  const arrays: SsdArrays = {
    ...scanArrays(t),
    resets: opts.seqIdx ? documentResets(opts.seqIdx, s.batch, s.seqLen) : null,
  };
  const track = isGradEnabled() && tapeInputs(t).some((u) => u.requiresGrad);
  const { y, state, saved } = ssdChunkedForward(s, arrays, chunkSize, track);
  return recordScan("ssdScanChunked", s, t, y, state, (gy, gs) =>
    ssdChunkedBackward(s, arrays, saved!, gy, gs),
  );
}
