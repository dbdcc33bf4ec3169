/**
 * RoPE on GPU tensors, as @loop/attention's `rope` (same options, same shapes):
 * x [B, T, H, hd] → [B, T, H, hd]; the backward rotates ∂y back by −a. The (cos, sin) table of
 * each (hd, T, theta, offset) is computed on the CPU in float64 by `ropeTables` and kept on the
 * device (the last few per context: every layer and loop step asks for the same one).
 */
import { type RopeOptions, ropeTables } from "@loop/tensor";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, uploadTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { ROPE_GROUP, ropeKernel } from "../kernels/rope.js";
import { recordGpu } from "../tape.js";

const TABLES_KEPT = 4;
const tables = new WeakMap<GpuContext, { key: string; tab: GpuTensor }[]>();

/** The device table [T, hd/2, 2] of (cos, sin); ropeTables checks hd, theta and offset. */
function ropeTable(ctx: GpuContext, hd: number, T: number, theta: number, offset: number) {
  const key = `${hd},${T},${theta},${offset}`;
  let list = tables.get(ctx);
  if (!list) {
    list = [];
    tables.set(ctx, list);
  }
  const hit = list.find((e) => e.key === key);
  if (hit && !hit.tab.released) return hit.tab;
  const { cos, sin } = ropeTables(hd, T, theta, offset);
  const interleaved = new Float32Array(2 * cos.length);
  for (let i = 0; i < cos.length; i++) {
    interleaved[2 * i] = cos[i]!;
    interleaved[2 * i + 1] = sin[i]!;
  }
  const tab = uploadTensor(ctx, interleaved, [T, hd / 2, 2], { persistent: true });
  list.unshift({ key, tab });
  // Commands already enqueued may still read an evicted table: the queue runs them before any
  // later write into its recycled buffer.
  if (list.length > TABLES_KEPT) list.pop()?.tab.dispose();
  return tab;
}

function rotate(x: GpuTensor, tab: GpuTensor, sign: 1 | -1): GpuTensor {
  const [, T, H, hd] = x.shape as [number, number, number, number];
  const y = emptyLike(x.ctx, x.shape);
  const n = x.size / 2;
  x.ctx.run(
    ropeKernel,
    { x: x.buffer, tab: tab.buffer, y: y.buffer },
    { n, T, H, half: hd / 2, sign },
    grid(n, ROPE_GROUP),
  );
  return y;
}

/** Apply RoPE to x [B, T, H, hd] (differentiable). */
export function rope(x: GpuTensor, opts: RopeOptions = {}): GpuTensor {
  if (x.rank !== 4)
    throw new Error(`webgpu rope: x must be [B, T, H, head_dim], got [${x.shape.join(",")}]`);
  const [, T, , hd] = x.shape as [number, number, number, number];
  const tab = ropeTable(x.ctx, hd, T, opts.theta ?? 10000, opts.offset ?? 0);
  const y = rotate(x, tab, 1);
  recordGpu("rope", [x], [y], ([g]) => [rotate(g!, tab, -1)]);
  return y;
}
