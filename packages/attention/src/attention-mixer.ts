/*
 * Attention mixer of docs/model.md §4: u [B, T, D] →
 *   q = u·q_projᵀ [B,T,Hq,hd], k = u·k_projᵀ, v = u·v_projᵀ [B,T,Hkv,hd] (no biases)
 *   q, k ← RoPE(·, rope_theta) at positions offset + t
 *   y = causal GQA attention(q, k, v)  (tiled kernel, attention.ts; projections, RoPE and
 *   attention are one op, projected-attention.ts)
 *   out = y·o_projᵀ [B, T, D]
 * hd = D / Hq. Initialisation: every weight uniform ±1/sqrt(fan_in); o_proj additionally divided
 * by sqrt(nLayers) (residual scaling, as docs/model.md §3 does for out_proj).
 * `step` / `prefill` are the inference paths through a KvCache; they compute exactly what
 * `forward` computes at the same positions.
 */
import {
  cpuTensorOps,
  cpuTransferOps,
  IntTensor,
  linear,
  type NamedParameter,
  noGrad,
  Rng,
  reshape,
  type SequenceMixer,
  shapeStr,
  type Tensor,
  tensor,
  weightLookup,
} from "@loop/tensor";
import { allocF32 } from "@loop/tensor/kernel";
import { attention } from "./attention.js";
import { attentionMix } from "./attention-mix.js";
import { cpuAttentionOps } from "./cpu-attention-ops.js";
import { type ModuleInit, positiveInt, residualScale, uniformWeight } from "./init.js";
import { appendAndAttend, appendKv, KvCache } from "./kv-cache.js";
import { ropeInPlace } from "./rope.js";

/**
 * Sizes of a causal self-attention mixer (GQA with RoPE): model width, query and key/value heads,
 * RoPE base.
 */
export interface AttentionConfig {
  dModel: number;
  nHeads: number;
  nKvHeads: number;
  ropeTheta: number;
  /** Largest number of positions (optional): later positions are an error. */
  maxPositions?: number;
}

/** Projection sizes of a config: head_dim = dModel / nHeads, q rows Hq·hd, k and v rows Hkv·hd. */
export function attentionProjDims(cfg: AttentionConfig): {
  headDim: number;
  qDim: number;
  kvDim: number;
} {
  const headDim = cfg.dModel / cfg.nHeads;
  return { headDim, qDim: cfg.nHeads * headDim, kvDim: cfg.nKvHeads * headDim };
}

/** The CPU ops the differentiable forward (attention-mix.ts) runs on. */
const CPU_OPS = { ...cpuTransferOps, ...cpuTensorOps, ...cpuAttentionOps };

/**
 * Causal grouped-query attention with RoPE as a `SequenceMixer`: q/k/v/o projections, a KV cache as
 * its decoding state.
 */
export class AttentionMixer implements SequenceMixer<KvCache> {
  /** Its decoding state, a KV cache, holds one entry per position. */
  readonly positional = true;
  /** The configuration it was built with (frozen copy). */
  readonly cfg: Readonly<AttentionConfig>;
  /** Per-head width hd = dModel / nHeads. */
  readonly headDim: number;
  /** `q_proj.weight` [nHeads·hd, D]. */
  readonly qProj: Tensor;
  /** `k_proj.weight` [nKvHeads·hd, D]. */
  readonly kProj: Tensor;
  /** `v_proj.weight` [nKvHeads·hd, D]. */
  readonly vProj: Tensor;
  /** `o_proj.weight` [D, nHeads·hd]. */
  readonly oProj: Tensor;

  constructor(cfg: AttentionConfig, opts: ModuleInit = {}) {
    const { dModel: D, nHeads: Hq, nKvHeads: Hkv, ropeTheta } = cfg;
    positiveInt(D, "AttentionMixer: dModel");
    positiveInt(Hq, "AttentionMixer: nHeads");
    positiveInt(Hkv, "AttentionMixer: nKvHeads");
    if (D % Hq !== 0) {
      throw new Error(`AttentionMixer: dModel=${D} must be divisible by nHeads=${Hq}`);
    }
    if (Hq % Hkv !== 0) {
      throw new Error(`AttentionMixer: nHeads=${Hq} must be divisible by nKvHeads=${Hkv}`);
    }
    const { headDim: hd, qDim, kvDim } = attentionProjDims(cfg);
    if (hd % 2 !== 0) {
      throw new Error(`AttentionMixer: head_dim = dModel/nHeads = ${hd} must be even for RoPE`);
    }
    if (!(ropeTheta > 0) || !Number.isFinite(ropeTheta)) {
      throw new Error(`AttentionMixer: ropeTheta must be a positive number, got ${ropeTheta}`);
    }
    if (cfg.maxPositions !== undefined)
      positiveInt(cfg.maxPositions, "AttentionMixer: maxPositions");
    this.cfg = Object.freeze({ ...cfg });
    this.headDim = hd;
    const rng = opts.rng ?? new Rng(0);
    const bound = 1 / Math.sqrt(D);
    this.qProj = uniformWeight(rng, "q_proj.weight", qDim, D, bound);
    this.kProj = uniformWeight(rng, "k_proj.weight", kvDim, D, bound);
    this.vProj = uniformWeight(rng, "v_proj.weight", kvDim, D, bound);
    const oBound = (1 / Math.sqrt(qDim)) * residualScale(opts.nLayers);
    this.oProj = uniformWeight(rng, "o_proj.weight", D, qDim, oBound);
  }

  /** The weight named `name` (docs/model.md §6, relative to the mixer), for attention-mix.ts. */
  readonly weight = weightLookup(this, "AttentionMixer");

  /** The four projection weights with their docs/model.md §6 names (relative to the mixer), all weight-decayed. */
  parameters(): NamedParameter[] {
    return [
      { name: "q_proj.weight", tensor: this.qProj, decay: true },
      { name: "k_proj.weight", tensor: this.kProj, decay: true },
      { name: "v_proj.weight", tensor: this.vProj, decay: true },
      { name: "o_proj.weight", tensor: this.oProj, decay: true },
    ];
  }

  private checkPositions(offset: number, T: number): void {
    if (!Number.isInteger(offset) || offset < 0) {
      throw new Error(
        `AttentionMixer: positionOffset must be a non-negative integer, got ${offset}`,
      );
    }
    const max = this.cfg.maxPositions;
    if (max !== undefined && offset + T > max) {
      throw new Error(
        `AttentionMixer: positions ${offset}..${offset + T - 1} exceed maxPositions=${max}`,
      );
    }
  }

  /**
   * u [B, T, D] → [B, T, D]; positions start at `positionOffset` (default 0). With `seqIdx`
   * (packed documents, AttentionOptions.seqIdx) a query sees only keys of its own document;
   * RoPE scores depend only on relative positions, so no position reset is needed.
   */
  forward(u: Tensor, seqIdx: Int32Array | null = null, positionOffset = 0): Tensor {
    const D = this.cfg.dModel;
    if (u.rank !== 3 || u.shape[2] !== D) {
      throw new Error(`AttentionMixer.forward: u must be [B, T, ${D}], got ${shapeStr(u.shape)}`);
    }
    this.checkPositions(positionOffset, u.shape[1]!);
    const seq = seqIdx ? new IntTensor(seqIdx, [seqIdx.length]) : null;
    return attentionMix(CPU_OPS, this.cfg, this.weight, u, { positionOffset, seqIdx: seq });
  }

  /** An empty cache for `batch` sequences of up to `capacity` positions. */
  initState(batch: number, capacity: number): KvCache {
    return new KvCache(batch, capacity, this.cfg.nKvHeads, this.headDim);
  }

  /**
   * `fn` on the cache of the rows `rows` alone (KvCache.gatherRows), then the entry it wrote at
   * the current position copied back into those rows; the length moves on at `endPosition`.
   */
  withRows<R>(cache: KvCache, rows: readonly number[], fn: (sub: KvCache) => R): R {
    const sub = cache.gatherRows(rows);
    const out = fn(sub);
    cache.copyPositionFrom(sub, rows, cache.length);
    return out;
  }

  /** Every row has its entry at the current position: advance the cache's length. */
  endPosition(cache: KvCache): void {
    cache.advance();
  }

  /**
   * Inference: u [B, T, D] are the next T tokens (positions cache.length…); appends their keys
   * and values to the cache and returns [B, T, D]. Nothing is recorded for a backward pass.
   * Into an empty cache (a prompt) the T queries attend with the tiled kernel; otherwise each
   * query runs the decode loop over the cache (appendAndAttend).
   */
  prefill(cache: KvCache, u: Tensor): Tensor {
    const { dModel: D, nHeads: Hq, nKvHeads: Hkv, ropeTheta: theta } = this.cfg;
    if (u.rank !== 3 || u.shape[2] !== D) {
      throw new Error(`AttentionMixer.prefill: u must be [B, T, ${D}], got ${shapeStr(u.shape)}`);
    }
    const [B, T] = u.shape as [number, number, number];
    const hd = this.headDim;
    if (cache.batch !== B || cache.nKvHeads !== Hkv || cache.headDim !== hd) {
      throw new Error(
        `AttentionMixer: cache is for batch=${cache.batch}, nKvHeads=${cache.nKvHeads}, headDim=${cache.headDim}; expected batch=${B}, nKvHeads=${Hkv}, headDim=${hd}`,
      );
    }
    this.checkPositions(cache.length, T);
    if (cache.length + T > cache.capacity) {
      throw new Error(
        `AttentionMixer: position ${cache.length + T - 1} is beyond the cache capacity ${cache.capacity}`,
      );
    }
    return noGrad(() => {
      const q = linear(u, this.qProj).data;
      const k = linear(u, this.kProj).data;
      const v = linear(u, this.vProj).data;
      ropeInPlace(q, [B, T, Hq, hd], theta, cache.length);
      ropeInPlace(k, [B, T, Hkv, hd], theta, cache.length);
      if (cache.length === 0 && T > 1) {
        // A prompt into an empty cache attends only to itself: the tiled causal kernel
        // (attention.ts, native when built) instead of the per-query decode loop.
        appendKv(cache, k, v, T);
        const y = attention(
          tensor(q, [B, T, Hq, hd]),
          tensor(k, [B, T, Hkv, hd]),
          tensor(v, [B, T, Hkv, hd]),
        );
        return linear(reshape(y, [B, T, Hq * hd]), this.oProj);
      }
      const y = allocF32(B * T * Hq * hd);
      appendAndAttend(cache, q, k, v, T, Hq, y);
      return linear(tensor(y, [B, T, Hq * hd]), this.oProj);
    });
  }

  /**
   * Inference: take one token into the cache rows `rows` without attending: its key (RoPE at
   * position cache.length) and value from u [rows.length, D], written at that position; the
   * length is not advanced (`cache.advance()` once every row has its entry). Costs the k/v
   * projections only. Early-exit decoding uses it for steps that an exited token skips, so later
   * tokens keep one key per position.
   */
  absorb(cache: KvCache, u: Tensor, rows: readonly number[]): void {
    const { dModel: D, nKvHeads: Hkv, ropeTheta: theta } = this.cfg;
    const n = rows.length;
    if (u.rank !== 2 || u.shape[1] !== D || u.shape[0] !== n) {
      throw new Error(
        `AttentionMixer.absorb: u must be [${n}, ${D}] (one row per cache row), got ${shapeStr(u.shape)}`,
      );
    }
    const L = cache.length;
    if (L >= cache.capacity)
      throw new Error(
        `AttentionMixer.absorb: position ${L} is beyond the cache capacity ${cache.capacity}`,
      );
    noGrad(() => {
      const k = linear(u, this.kProj).data;
      const v = linear(u, this.vProj).data;
      ropeInPlace(k, [n, 1, Hkv, this.headDim], theta, L);
      cache.writeRows(k, v, rows, L);
    });
  }

  /** Inference: one token per sequence, u [B, D] → [B, D] at position cache.length. */
  step(cache: KvCache, u: Tensor): Tensor {
    const D = this.cfg.dModel;
    if (u.rank !== 2 || u.shape[1] !== D) {
      throw new Error(`AttentionMixer.step: u must be [B, ${D}], got ${shapeStr(u.shape)}`);
    }
    const B = u.shape[0]!;
    const y = this.prefill(
      cache,
      noGrad(() => reshape(u, [B, 1, D])),
    );
    return noGrad(() => reshape(y, [B, D]));
  }
}
