/**
 * The Mamba-2 mixer (docs/model.md §3) on the device: a transcription of
 * `Mamba2Mixer.run` (@loop/ssm-kernels) from a zero state, op for op, with the GPU ops of the
 * same names:
 *   z, xBC, dt ← u·in_projᵀ;  x, B, C ← silu(causal_conv1d(xBC));  dt ← softplus(dt + dt_bias)
 *   A = −exp(A_log);  y = SSD(x, dt, A, B, C) + D ⊙ x;  out = (gatedRmsnorm(y, z)·norm.weight)·out_projᵀ
 */
import type { ModelConfig } from "@loop/looped";
import type { GpuTensor } from "../gpu-tensor.js";
import { causalConv1dSiluSplit } from "../ops/conv-silu-split.js";
import { gatedRmsnorm } from "../ops/gated-rmsnorm.js";
import { linearSplit } from "../ops/linear-split.js";
import { softplusBias } from "../ops/mamba2-ops.js";
import { linear } from "../ops/matmul.js";
import { reshape } from "../ops/shape.js";
import { ssdScanChunked } from "../ops/ssd-scan-chunked.js";
import { exp, neg } from "../ops/unary.js";
import type { GpuParameters } from "./gpu-parameters.js";

export class GpuMamba2Mixer {
  private readonly inProj: GpuTensor;
  private readonly convWeight: GpuTensor;
  private readonly convBias: GpuTensor;
  private readonly dtBias: GpuTensor;
  private readonly aLog: GpuTensor;
  private readonly d: GpuTensor;
  private readonly normWeight: GpuTensor;
  private readonly outProj: GpuTensor;
  private readonly dInner: number;
  private readonly nHeads: number;
  private readonly convDim: number;

  constructor(
    private readonly cfg: ModelConfig,
    params: GpuParameters,
    prefix: string,
  ) {
    const at = (n: string) => params.get(`${prefix}${n}`);
    this.inProj = at("in_proj.weight");
    this.convWeight = at("conv1d.weight");
    this.convBias = at("conv1d.bias");
    this.dtBias = at("dt_bias");
    this.aLog = at("A_log");
    this.d = at("D");
    this.normWeight = at("norm.weight");
    this.outProj = at("out_proj.weight");
    const { expand, headdim, n_groups: G, d_state: N } = cfg.ssm;
    this.dInner = expand * cfg.d_model;
    this.nHeads = this.dInner / headdim;
    this.convDim = this.dInner + 2 * G * N;
  }

  /** u [B,T,D] → [B,T,D]; `seqIdx` [B·T] resets conv and scan at document starts. */
  forward(u: GpuTensor, seqIdx: GpuTensor | null): GpuTensor {
    const { headdim: P, d_state: N, n_groups: G, chunk_size: chunkSize } = this.cfg.ssm;
    const { dInner: Di, nHeads: H, convDim: C } = this;
    const [batch, T] = u.shape as [number, number, number];
    const [z, xbc, dtRaw] = linearSplit(u, this.inProj, [Di, C, H]) as [
      GpuTensor,
      GpuTensor,
      GpuTensor,
    ];
    const [xs, bs, cs] = causalConv1dSiluSplit(
      xbc,
      this.convWeight,
      this.convBias,
      null,
      [Di, G * N, G * N],
      seqIdx,
    ) as [GpuTensor, GpuTensor, GpuTensor];
    const x = reshape(xs, [batch, T, H, P]);
    const dt = softplusBias(dtRaw, this.dtBias);
    const A = neg(exp(this.aLog));
    const scan = ssdScanChunked(
      x,
      dt,
      A,
      reshape(bs, [batch, T, G, N]),
      reshape(cs, [batch, T, G, N]),
      { chunkSize, initialState: null, D: this.d, seqIdx },
    );
    const y = reshape(scan.y, [batch, T, Di]);
    const normed = gatedRmsnorm(y, z, this.normWeight, G, this.cfg.norm_eps);
    return linear(normed, this.outProj);
  }
}
