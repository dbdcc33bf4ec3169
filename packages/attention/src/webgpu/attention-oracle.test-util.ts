/**
 * The WebGPU attention tests' comparison: @loop/attention's tiled attention (the CPU oracle)
 * and the WGSL op on the same random q, k, v (and packed documents), forward and every gradient.
 */

import { backward } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectClose, toGpu } from "@loop/test-support-gpu";
import { type GpuContext, releaseTransients, uploadTensor } from "@loop/webgpu";
import { attention, backwardGpu } from "@loop/webgpu/internal";
import { attention as cpuAttention } from "../index.js";

export interface AttentionCase {
  B: number;
  T: number;
  Hq: number;
  Hkv: number;
  hd: number;
  /** Per batch row, the positions where a new document starts (packed documents). */
  doc?: number[][];
}

/** Document indices [B·T] from the start positions of each row. */
function docs(B: number, T: number, starts: number[][]): Int32Array {
  const s = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    let d = 0;
    for (let t = 0; t < T; t++) {
      if (starts[b]!.includes(t)) d++;
      s[b * T + t] = d;
    }
  }
  return s;
}

export async function compareAttention(ctx: GpuContext, c: AttentionCase): Promise<void> {
  const { B, T, Hq, Hkv, hd } = c;
  const q = randn([B, T, Hq, hd], 1);
  const k = randn([B, T, Hkv, hd], 2);
  const v = randn([B, T, Hkv, hd], 3);
  const dy = randn([B, T, Hq, hd], 4, { requiresGrad: false });
  const seq = c.doc ? docs(B, T, c.doc) : null;
  const y = cpuAttention(q, k, v, { seqIdx: seq });
  backward([y], [dy.data]);
  const gq = toGpu(ctx, q);
  const gk = toGpu(ctx, k);
  const gv = toGpu(ctx, v);
  const seqIdx = seq ? uploadTensor(ctx, seq, [B, T]) : null;
  const gy = attention(gq, gk, gv, { seqIdx });
  await expectClose(gy, y.data, "y");
  backwardGpu(gy, toGpu(ctx, dy, false));
  await expectClose(gq.grad!, q.grad!, "∂q");
  await expectClose(gk.grad!, k.grad!, "∂k");
  await expectClose(gv.grad!, v.grad!, "∂v");
  for (const t of [gq, gk, gv]) t.dispose();
  releaseTransients(ctx);
}
