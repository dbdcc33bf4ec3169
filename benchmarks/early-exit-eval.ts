/**
 * Teacher-forced evaluation of decoding modes on held-out token windows, for benchmarks/early-exit.ts.
 * Every mode feeds the same windows token by token through the recurrent decoder and scores the
 * next token: mean negative log-likelihood (perplexity = exp), argmax accuracy, mean exit step.
 *   full:      decodeStep, all R steps, logits(R)
 *   threshold: decodeStep, all R steps, logits(z) with z the exit-gate threshold rule (the paper's
 *              inference: z is only a predicted depth, nothing is saved)
 *   early:     decodeStepEarlyExit at q (steps after z skipped, states carried); with q = 1 and
 *              maxStep k, the loop truncated to k steps for every token
 */
import {
  decodeStep,
  decodeStepEarlyExit,
  initDecodeState,
  isAttentionLayer,
  type LoopedModel,
} from "@loop/looped";
import { attentionLayerFlops, mambaLayerFlops } from "@loop/looped/internal";

export interface ModeScore {
  nll: number;
  acc: number;
  meanExit: number;
  /** Layer applications skipped / (tokens · R · N). */
  skipped: number;
  /** Attention layers whose KV slot was filled by propagation / (tokens · R · N). */
  propagated: number;
}

function logProbOf(logits: Float32Array, off: number, V: number, target: number) {
  let max = Number.NEGATIVE_INFINITY;
  let arg = 0;
  for (let v = 0; v < V; v++)
    if (logits[off + v]! > max) {
      max = logits[off + v]!;
      arg = v;
    }
  let s = 0;
  for (let v = 0; v < V; v++) s += Math.exp(logits[off + v]! - max);
  return { lp: logits[off + target]! - max - Math.log(s), hit: arg === target };
}

/** windows: B rows of T tokens; scores positions 0..T−2 against the next token. */
export function evalFullAndThreshold(
  model: LoopedModel,
  windows: Int32Array[],
  qs: readonly number[],
): { full: ModeScore; threshold: ModeScore[] } {
  const { n_loops: R, vocab_size: V, d_model: D } = model.config;
  const B = windows.length;
  const T = windows[0]!.length;
  const g = model.exitGate!;
  const st = initDecodeState(model, B, T);
  const full = { nll: 0, acc: 0, meanExit: R, skipped: 0, propagated: 0 };
  const thr = qs.map(() => ({ nll: 0, acc: 0, meanExit: 0, skipped: 0, propagated: 0 }));
  for (let t = 0; t < T - 1; t++) {
    const res = decodeStep(
      model,
      st,
      windows.map((w) => w[t]!),
    );
    for (let b = 0; b < B; b++) {
      const target = windows[b]![t + 1]!;
      const f = logProbOf(res.logits[R - 1]!.data, b * V, V, target);
      full.nll -= f.lp;
      full.acc += f.hit ? 1 : 0;
      // CDF(n) = 1 − S(n): exit at the first n < R with S(n) ≤ 1 − q.
      const logS: number[] = [];
      let acc = 0;
      for (let r = 0; r < R - 1; r++) {
        let a = g.bias.data[0]!;
        for (let d = 0; d < D; d++) a += g.weight.data[d]! * res.readouts[r]!.data[b * D + d]!;
        acc -= Math.max(a, 0) + Math.log1p(Math.exp(-Math.abs(a)));
        logS.push(acc);
      }
      qs.forEach((q, k) => {
        let z = R;
        for (let r = 0; r < R - 1; r++)
          if (logS[r]! <= Math.log1p(-q)) {
            z = r + 1;
            break;
          }
        const s = logProbOf(res.logits[z - 1]!.data, b * V, V, target);
        thr[k]!.nll -= s.lp;
        thr[k]!.acc += s.hit ? 1 : 0;
        thr[k]!.meanExit += z;
      });
    }
  }
  const n = B * (T - 1);
  for (const s of [full, ...thr]) {
    s.nll /= n;
    s.acc /= n;
  }
  for (const s of thr) s.meanExit /= n;
  return { full, threshold: thr };
}

export function evalEarlyExit(
  model: LoopedModel,
  windows: Int32Array[],
  q: number,
  maxStep?: number,
  skipped?: "carry" | "propagate",
): ModeScore {
  const { n_loops: R, vocab_size: V } = model.config;
  const N = model.layers.length;
  const B = windows.length;
  const T = windows[0]!.length;
  const st = initDecodeState(model, B, T);
  const s = { nll: 0, acc: 0, meanExit: 0, skipped: 0, propagated: 0 };
  for (let t = 0; t < T - 1; t++) {
    const res = decodeStepEarlyExit(
      model,
      st,
      windows.map((w) => w[t]!),
      { q, maxStep, skipped },
    );
    s.skipped += res.layersSkipped;
    s.propagated += res.kvPropagated;
    for (let b = 0; b < B; b++) {
      const r = logProbOf(res.logits.data, b * V, V, windows[b]![t + 1]!);
      s.nll -= r.lp;
      s.acc += r.hit ? 1 : 0;
      s.meanExit += res.exitSteps[b]!;
    }
  }
  const n = B * (T - 1);
  return {
    nll: s.nll / n,
    acc: s.acc / n,
    meanExit: s.meanExit / n,
    skipped: s.skipped / (n * R * N),
    propagated: s.propagated / (n * R * N),
  };
}

/**
 * Estimated share of decode FLOPs saved (docs/model.md §7 per-layer counts, head once per token, KV
 * propagation 4·D·Hkv·hd per propagated layer, SSM propagation with "propagate"): skipped layer
 * FLOPs minus propagation, over the
 * full R-step cost. The attention context is the mean causal context of a T-token window.
 */
export function flopsSaved(
  model: LoopedModel,
  meanExit: number,
  seqLen: number,
  skipped: "carry" | "propagate" = "carry",
): number {
  const cfg = model.config;
  const { n_loops: R, d_model: D, vocab_size: V } = cfg;
  let block = 0;
  let attnLayers = 0;
  model.layers.forEach((_, i) => {
    if (isAttentionLayer(cfg, i)) {
      block += attentionLayerFlops(cfg, seqLen);
      attnLayers++;
    } else block += mambaLayerFlops(cfg);
    if (cfg.mlp) block += 6 * D * cfg.mlp.d_ff;
  });
  const hd = D / cfg.attention.n_heads;
  let prop = attnLayers * 4 * D * cfg.attention.n_kv_heads * hd;
  if (skipped === "propagate") {
    // Mamba2Mixer.absorb (ssm-kernels mamba2-step.ts): 2D(Di+2G·Ns+H) + 2K(Di+2G·Ns) + 3·Di·Ns per Mamba layer.
    const Di = cfg.ssm.expand * D;
    const GN = cfg.ssm.n_groups * cfg.ssm.d_state;
    const H = Di / cfg.ssm.headdim;
    const K = cfg.ssm.d_conv;
    const perLayer = 2 * D * (Di + 2 * GN + H) + 2 * K * (Di + 2 * GN) + 3 * Di * cfg.ssm.d_state;
    prop += (model.layers.length - attnLayers) * perLayer;
  }
  const full = R * block + 2 * D * V;
  return ((R - meanExit) * (block - prop)) / full;
}
