/*
 * `ssdScanChunked` on GPU tensors: the twin of @loop/ssm-kernels' op (same arguments, options,
 * shapes and gradients; the kernels and their maths: kernels/ssd-chunked.ts and
 * kernels/ssd-chunked-backward.ts). Four dispatches forward, eight backward (the D skip's
 * gradient included; a column sum over more than 256 rows adds a stage); nothing is read back.
 * Shapes: x [B,T,H,P], dt [B,T,H], A [H], B/C [B,T,G,N], initialState [B,H,P,N], D [H],
 * seqIdx an i32 [B·T] tensor (non-decreasing along a row; not checked on the device, which
 * would need a read-back) → y [B,T,H,P], state [B,H,P,N].
 */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid, groups } from "../kernel-def.js";
import {
  MAX_CHUNK,
  SSD_LINEAR_GROUP,
  ssdChunkOuterKernel,
  ssdChunkOutKernel,
  type ssdDims,
  ssdPrepCbKernel,
  ssdStatePassKernel,
  TILE,
} from "../kernels/ssd-chunked.js";
import {
  ssdDtGradKernel,
  ssdFinishKernel,
  ssdGradXKernel,
  ssdGroupGradKernel,
  ssdIntraGradKernel,
  ssdOuterRowsKernel,
  ssdReversePassKernel,
  ssdRowsByStateKernel,
} from "../kernels/ssd-chunked-backward.js";
import { segmentOf } from "../kernels/wgsl-seg-scan.js";
import { type GradTarget, gradTarget, recordGpu } from "../tape.js";
import { columnRoleParams, columnSumFinish, columnSumStart } from "./column-sum.js";
import { fillTensor } from "./elementwise-plain.js";
import { checkSeqIdx, placeholder } from "./optional-inputs.js";
import { shapeStr } from "./shape-str.js";

/**
 * Options of the GPU chunked SSD scan: chunk length, initial state, fused D skip and packed
 * documents.
 */
export interface GpuSsdChunkedOptions {
  /** Chunk length (default 64, at most 256). */
  chunkSize?: number;
  /** Initial state [B,H,P,N] (zeros when absent); gradients flow into it. */
  initialState?: GpuTensor | null;
  /** The D skip [H], fused: y = SSD(…) + D_h·x. */
  D?: GpuTensor | null;
  /** Packed documents: i32 [B·T] document index per position; the state resets where it changes. */
  seqIdx?: GpuTensor | null;
}

/** The GPU SSD scan's output y [B,T,H,P] and final state [B,H,P,N]. */
export interface GpuSsdScanResult {
  y: GpuTensor;
  state: GpuTensor;
}

function expectShape(name: string, t: GpuTensor, want: readonly number[]): void {
  if (shapeStr(t.shape) !== shapeStr(want))
    throw new Error(
      `webgpu ssdScanChunked: ${name} must have shape ${shapeStr(want)}, got ${shapeStr(t.shape)}`,
    );
}

const tiles = (n: number) => groups(n, TILE);

/**
 * The Mamba-2 chunked SSD scan on the GPU (as `ssdScanChunked` of @loop/ssm-kernels);
 * differentiable.
 */
export function ssdScanChunked(
  x: GpuTensor,
  dt: GpuTensor,
  A: GpuTensor,
  B: GpuTensor,
  C: GpuTensor,
  opts: GpuSsdChunkedOptions = {},
): GpuSsdScanResult {
  const op = "webgpu ssdScanChunked";
  if (x.rank !== 4) throw new Error(`${op}: x must be [B,T,H,P], got ${shapeStr(x.shape)}`);
  if (B.rank !== 4) throw new Error(`${op}: B must be [B,T,G,N], got ${shapeStr(B.shape)}`);
  const [batch, T, H, P] = x.shape as [number, number, number, number];
  const G = B.shape[2]!;
  const N = B.shape[3]!;
  expectShape("dt", dt, [batch, T, H]);
  expectShape("A", A, [H]);
  expectShape("B", B, [batch, T, G, N]);
  expectShape("C", C, [batch, T, G, N]);
  if (G < 1 || H % G !== 0)
    throw new Error(`${op}: number of heads H=${H} must be divisible by number of groups G=${G}`);
  const s0 = opts.initialState ?? null;
  if (s0) expectShape("initialState", s0, [batch, H, P, N]);
  const D = opts.D ?? null;
  if (D && (D.rank !== 1 || D.size !== H))
    throw new Error(`${op}: D must be [${H}], got ${shapeStr(D.shape)}`);
  const seqIdx = opts.seqIdx ?? null;
  if (seqIdx) checkSeqIdx("ssdScanChunked", seqIdx, batch, T);
  const chunkSize = opts.chunkSize ?? 64;
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new Error(`${op}: chunkSize must be a positive integer, got ${chunkSize}`);
  const Lc = Math.min(chunkSize, Math.max(T, 1));
  if (Lc > MAX_CHUNK)
    throw new Error(`${op}: chunkSize ${chunkSize} exceeds the ${MAX_CHUNK} the WGSL kernels take`);
  const nc = Math.ceil(T / Lc);
  const seg = segmentOf(Lc); // threads per chunk in the prefix-sum kernels
  const ctx = x.ctx;
  const BH = batch * H;
  const PN = P * N;
  const dims = { B: batch, T, H, P, G, N, Lc, nc, hasSeq: seqIdx ? 1 : 0 };
  const seq = seqIdx?.buffer ?? placeholder(ctx);
  const dBuf = D?.buffer ?? placeholder(ctx);
  const hasD = D ? 1 : 0;
  const stateTiles = tiles(P) * tiles(N);

  // prep (dt, A → dl) and C·Bᵀ (→ cb) in one dispatch
  const dl = emptyLike(ctx, [batch, H, T, 2]);
  const cb = emptyLike(ctx, [batch, nc, G, Lc, Lc]);
  const prepGroups = Math.ceil((BH * nc * seg) / SSD_LINEAR_GROUP);
  const cbTiles = tiles(Lc) ** 2;
  ctx.run(
    ssdPrepCbKernel,
    { dt, A, dl, Bm: B, Cm: C, cb },
    { ...dims, n: BH * nc, seg, prepGroups, cbTiles },
    grid((prepGroups + cbTiles * nc * batch * G) * SSD_LINEAR_GROUP, SSD_LINEAR_GROUP),
  );
  const sloc = emptyLike(ctx, [batch, H, nc, P, N]);
  const cdecay = emptyLike(ctx, [batch, H, nc]);
  ctx.run(ssdChunkOuterKernel, { u: x, dl, v: B, seq, out: sloc, cdecay }, { ...dims, mode: 0 }, [
    stateTiles,
    nc,
    BH,
  ]);
  const states = emptyLike(ctx, [batch, H, nc, P, N]);
  const state = emptyLike(ctx, [batch, H, P, N]);
  ctx.run(
    ssdStatePassKernel,
    { sloc, cdecay, s0: s0 ?? placeholder(ctx), states, last: state },
    { nc, PN, n: BH * PN, hasS0: s0 ? 1 : 0 },
    grid(BH * PN, SSD_LINEAR_GROUP),
  );
  sloc.dispose();
  const y = emptyLike(ctx, x.shape);
  ctx.run(ssdChunkOutKernel, { x, dl, Cm: C, cb, states, seq, D: dBuf, y }, { ...dims, hasD }, [
    tiles(Lc) * tiles(P),
    nc,
    BH,
  ]);

  const inputs = s0 ? [x, dt, A, B, C, s0] : [x, dt, A, B, C];
  if (D) inputs.push(D);
  recordGpu("ssdScanChunked", inputs, [y, state], ([gyIn, gsIn]) => {
    const gy = gyIn ?? fillTensor(ctx, x.shape, 0);
    const saved = { dl, cb, cdecay, states };
    // ∂D (the D skip's) is summed in the dispatch of ∂dt and ∂A
    const dInto = D?.requiresGrad ? gradTarget(D) : null;
    const grads = ssdBackward(
      ctx,
      dims,
      { x, A, B, C },
      saved,
      gy,
      gsIn ?? null,
      seq,
      dBuf,
      hasD,
      dInto,
    );
    const out: (GpuTensor | null)[] = [grads.x, grads.dt, grads.A, grads.B, grads.C];
    if (s0) out.push(grads.s0);
    else grads.s0.dispose();
    if (D) out.push(grads.D);
    return out;
  });
  return { y, state };
}

type Dims = Record<keyof typeof ssdDims, number>;

/** The backward passes (kernels/ssd-chunked-backward.ts), in order. */
function ssdBackward(
  ctx: GpuContext,
  dims: Dims,
  inp: { x: GpuTensor; A: GpuTensor; B: GpuTensor; C: GpuTensor },
  saved: { dl: GpuTensor; cb: GpuTensor; cdecay: GpuTensor; states: GpuTensor },
  gy: GpuTensor,
  gs: GpuTensor | null,
  seq: GPUBuffer,
  dBuf: GPUBuffer,
  hasD: number,
  dInto: GradTarget | null,
) {
  const { B: batch, T, H, P, G, N, Lc, nc } = dims;
  const BH = batch * H;
  const PN = P * N;
  const { dl, cb, cdecay, states } = saved;
  const seg = segmentOf(Lc);
  // q (the state gradient from the outputs) and dCh = gy·S_c: one dispatch
  const q = emptyLike(ctx, states.shape);
  const dCh = emptyLike(ctx, [batch, T, H, N]);
  const t1 = tiles(P) * tiles(N);
  const t2 = tiles(Lc) * tiles(N);
  ctx.run(
    ssdOuterRowsKernel,
    {
      u: gy.buffer,
      dl,
      v: inp.C,
      seq,
      out: q,
      cdecay: emptyLike(ctx, [1]).buffer, // mode 1 leaves it unwritten
      states,
      dCh,
    },
    { ...dims, mode: 1, t1, t2 },
    grid((t1 + t2) * nc * BH, 1),
  );
  const rstore = emptyLike(ctx, states.shape);
  const dotRS = emptyLike(ctx, [batch, H, nc]);
  const gs0 = emptyLike(ctx, [batch, H, P, N]);
  ctx.run(
    ssdReversePassKernel,
    { gs: gs ?? placeholder(ctx), q, cdecay, states, rstore, dotRS, gs0 },
    { nc, PN, hasGs: gs ? 1 : 0 },
    [BH],
  );
  q.dispose();
  const dcbh = emptyLike(ctx, [batch, nc, H, Lc, Lc]);
  const sums = emptyLike(ctx, [batch, H, T, 2]);
  ctx.run(ssdIntraGradKernel, { gy, x: inp.x, dl, cb, seq, dotRS, dcbh, sums }, dims, [1, nc, BH]);
  const gx = emptyLike(ctx, inp.x.shape);
  ctx.run(ssdGradXKernel, { gy, dl, cb, Bm: inp.B, rstore, seq, D: dBuf, gx }, { ...dims, hasD }, [
    tiles(Lc) * tiles(P),
    nc,
    BH,
  ]);
  const rowTiles: [number, number, number] = [tiles(Lc) * tiles(N), nc, BH];
  const dBh = emptyLike(ctx, [batch, T, H, N]);
  ctx.run(ssdRowsByStateKernel, { u: inp.x, s: rstore, out: dBh }, dims, rowTiles);
  ctx.run(
    ssdFinishKernel,
    { dl, Bm: inp.B, Cm: inp.C, seq, dBh, dCh, sums },
    { ...dims, n: BH * nc, seg },
    grid(BH * nc * seg, SSD_LINEAR_GROUP),
  );
  const gB = emptyLike(ctx, inp.B.shape);
  const gC = emptyLike(ctx, inp.C.shape);
  ctx.run(ssdGroupGradKernel, { Bm: inp.B, Cm: inp.C, dcbh, dBh, dCh, gB, gC }, dims, [
    tiles(Lc) * tiles(N),
    nc,
    batch * G,
  ]);
  const gdt = emptyLike(ctx, [batch, T, H]);
  const n = batch * T * H;
  // ∂dt, then the first stages of ∂A's and ∂D's column sums, in one dispatch
  const dtGroups = Math.ceil(n / SSD_LINEAR_GROUP);
  const aSum = columnSumStart(ctx, batch * T, H);
  const dSum = dInto ? columnSumStart(ctx, batch * T, H, [H], dInto) : null;
  ctx.run(
    ssdDtGradKernel,
    {
      sums,
      A: inp.A,
      dl,
      gy,
      x: inp.x,
      gdt,
      apartial: aSum.partial,
      dpartial: dSum?.partial ?? placeholder(ctx),
    },
    {
      T,
      H,
      P,
      n,
      dtGroups,
      aJobs: aSum.jobs,
      dJobs: dSum?.jobs ?? 0,
      ...columnRoleParams(aSum, "a"),
      ...columnRoleParams(dSum, "d", H),
    },
    grid((dtGroups + aSum.jobs + (dSum?.jobs ?? 0)) * SSD_LINEAR_GROUP, SSD_LINEAR_GROUP),
  );
  const gA = columnSumFinish(aSum);
  const gD = dSum ? columnSumFinish(dSum) : null;
  for (const t of [rstore, dotRS, dcbh, sums, dBh, dCh]) t.dispose();
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0, D: gD };
}
