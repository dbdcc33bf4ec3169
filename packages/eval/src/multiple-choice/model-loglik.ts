/*
 * Continuation log-likelihoods under every loop step of a model:
 *   ll(r) = Σ_j log softmax(logits(r)[p_j])[cont_j],   p_j = len(input) − len(cont) + j
 * Requests are sorted by input length (longest first, as the harness does) and run in batches
 * right-padded to the batch's longest input; a causal model's outputs at a position do not depend
 * on later (padding) tokens. The forward skips the LM head; only the continuation positions'
 * readouts go through it, so memory is B·T·D per step instead of B·T·V.
 */
import { intTensor, noGrad, tensor } from "@loop/tensor";
import { withKernels } from "@loop/tensor/kernel";
import type { EvalModel, OnKernels } from "../eval-model.js";
import { logProbAt } from "../log-prob.js";
import type { LoglikRequest } from "./harness-encode.js";

/** Log-likelihoods `[step][request]` for requests, one array per loop step. */
export type LoglikelihoodFn = (requests: readonly LoglikRequest[]) => Float64Array[];

/** Options of `modelLoglikelihoods`: requests per forward, padding id, CPU kernels. */
export interface ModelLoglikOptions extends OnKernels {
  /** Requests per forward pass (default 8). */
  batchSize?: number;
  /** Token used to right-pad shorter inputs (default 0). */
  padId?: number;
}

/**
 * Each request's continuation log-likelihood at every loop step of `model` (result[r][i]), batched
 * and right-padded, without a tape.
 */
export function modelLoglikelihoods(
  model: EvalModel,
  requests: readonly LoglikRequest[],
  opts: ModelLoglikOptions = {},
): Float64Array[] {
  const bs = opts.batchSize ?? 8;
  if (!Number.isInteger(bs) || bs < 1)
    throw new Error(`batchSize must be an integer ≥ 1, got ${bs}`);
  const pad = opts.padId ?? 0;
  const R = model.config.n_loops;
  const V = model.config.vocab_size;
  requests.forEach((q, i) => {
    if (q.continuation.length === 0 || q.continuation.length > q.input.length)
      throw new Error(
        `requests[${i}]: continuation must have 1..${q.input.length} tokens (input length), got ${q.continuation.length}`,
      );
    for (const ids of [q.input, q.continuation])
      for (const t of ids)
        if (t < 0 || t >= V)
          throw new Error(`requests[${i}]: token ${t} is outside the model's vocab [0, ${V})`);
  });
  const out = Array.from({ length: R }, () => new Float64Array(requests.length));
  const order = requests
    .map((_q, i) => i)
    .sort((a, b) => requests[b]!.input.length - requests[a]!.input.length);
  for (let s = 0; s < order.length; s += bs) {
    const idx = order.slice(s, s + bs);
    const T = requests[idx[0]!]!.input.length;
    const B = idx.length;
    const ids = new Int32Array(B * T).fill(pad);
    // Flat row index (b·T + p) of every scored position, and its target.
    const rows: number[] = [];
    const targets: number[] = [];
    const owner: number[] = [];
    idx.forEach((ri, b) => {
      const q = requests[ri]!;
      ids.set(q.input, b * T);
      const start = q.input.length - q.continuation.length;
      q.continuation.forEach((t, j) => {
        rows.push(b * T + start + j);
        targets.push(t);
        owner.push(ri);
      });
    });
    withKernels(opts.kernels, () =>
      noGrad(() => {
        const fwd = model.forward(intTensor(ids, [B, T]), { steps: "all", skipLogits: true });
        fwd.readouts.forEach((ro, r) => {
          const D = ro.shape[ro.shape.length - 1]!;
          const g = new Float32Array(rows.length * D);
          rows.forEach((row, k) => {
            g.set(ro.data.subarray(row * D, row * D + D), k * D);
          });
          const logits = model.head(tensor(g, [rows.length, D])).data;
          const acc = out[r]!;
          targets.forEach((t, k) => {
            acc[owner[k]!]! += logProbAt(logits, k, V, t);
          });
        });
      }),
    );
  }
  return out;
}
