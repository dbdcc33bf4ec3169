/*
 * Log-softmax and cross-entropy over the last axis (numerically stable, max-shifted).
 *   logSoftmax(x)_j = x_j − m − ln Σ_k e^{x_k − m}       ∂x = g − softmax · Σ g
 *   crossEntropyPerToken: ℓ_i = −logSoftmax(x_i)[t_i], 0 where t_i = ignoreIndex
 *       ∂x_i = g_i · (softmax(x_i) − onehot(t_i))
 *   crossEntropy: mean of ℓ_i over rows whose target ≠ ignoreIndex (NaN when there are none).
 * Shapes: logits [..., V], targets int [...] with the same leading shape.
 * Every exponent here is ≤ 0 (x − max, x − lse), so the fast e^x≤0 of fast-exp.ts applies.
 */
import { record1 } from "../autograd/node.js";
import { allocShared64, shareable } from "../shareable.js";
import { allocF32, type IntTensor, shapeStr, type Tensor } from "../tensor.js";
import { ceBackward, ceForward } from "./cross-entropy-kernels.js";
import { fastExp, rowLogSumExp } from "./fast-exp.js";

/** Target value that carries no loss (PyTorch's `ignore_index`). */
export const IGNORE_INDEX = -100;

/** log softmax over the last axis; differentiable. */
export function logSoftmax(x: Tensor): Tensor {
  const V = x.lastDim;
  const rows = x.rows;
  const xd = x.data;
  const y = allocF32(x.size);
  for (let r = 0; r < rows; r++) {
    const o = r * V;
    const lse = rowLogSumExp(xd, o, V);
    for (let j = 0; j < V; j++) y[o + j] = xd[o + j]! - lse;
  }
  return record1("logSoftmax", [x], y, x.shape, ([g]) => {
    const gx = allocF32(x.size);
    for (let r = 0; r < rows; r++) {
      const o = r * V;
      let gs = 0;
      for (let j = 0; j < V; j++) gs += g![o + j]!;
      for (let j = 0; j < V; j++) gx[o + j] = g![o + j]! - fastExp(y[o + j]!) * gs;
    }
    return [gx];
  });
}

function checkTargets(logits: Tensor, targets: IntTensor, op: string): void {
  const lead = logits.shape.slice(0, -1);
  if (lead.join(",") !== targets.shape.join(",")) {
    throw new Error(
      `${op}: targets ${shapeStr(targets.shape)} do not match logits ${shapeStr(logits.shape)}`,
    );
  }
  const V = logits.lastDim;
  const td = targets.data;
  for (let i = 0; i < td.length; i++) {
    const t = td[i]!;
    if (t !== IGNORE_INDEX && (t < 0 || t >= V)) {
      throw new Error(
        `${op}: target ${t} at position ${i} is outside [0, ${V}) and is not ${IGNORE_INDEX}`,
      );
    }
  }
}

/**
 * Per-row CE (0 at ignored rows) with the row log-sum-exp kept for the backward; both passes run
 * over rows on the thread pool when one is running (cross-entropy-kernels.ts).
 */
export function crossEntropyPerToken(logits: Tensor, targets: IntTensor): Tensor {
  checkTargets(logits, targets, "crossEntropyPerToken");
  const V = logits.lastDim;
  const xd = logits.data;
  const t = shareable(targets.data);
  const lse = allocShared64(t.length);
  const y = allocF32(t.length);
  ceForward({ x: xd, t, lse, y, V, ignore: IGNORE_INDEX });
  return record1("crossEntropyPerToken", [logits], y, targets.shape, ([g]) => {
    const gx = allocF32(logits.size);
    ceBackward({ x: xd, t, lse, g: g!, gx, V, ignore: IGNORE_INDEX });
    return [gx];
  });
}

/** Number of targets that are not the ignore index. */
export function countTargets(targets: IntTensor): number {
  let n = 0;
  const td = targets.data;
  for (let i = 0; i < td.length; i++) if (td[i] !== IGNORE_INDEX) n++;
  return n;
}

/** Mean CE over non-ignored targets: the fused per-token CE scaled by 1/count. */
export function crossEntropy(logits: Tensor, targets: IntTensor): Tensor {
  const per = crossEntropyPerToken(logits, targets);
  const n = countTargets(targets);
  let s = 0;
  const pd = per.data;
  for (let i = 0; i < pd.length; i++) s += pd[i]!;
  return record1(
    "crossEntropy",
    [per],
    Float32Array.of(n === 0 ? Number.NaN : s / n),
    [1],
    ([g]) => {
      const gx = allocF32(per.size);
      if (n === 0) return [gx];
      const v = g![0]! / n;
      const td = targets.data;
      for (let i = 0; i < gx.length; i++) if (td[i] !== IGNORE_INDEX) gx[i] = v;
      return [gx];
    },
  );
}

/**
 * Entropy of distributions along the last axis: H = −Σ p ln p (0·ln 0 = 0), ∂p = −(ln p + 1).
 */
export function entropy(p: Tensor): Tensor {
  const K = p.lastDim;
  const rows = p.rows;
  const pd = p.data;
  const y = allocF32(rows);
  for (let r = 0; r < rows; r++) {
    let h = 0;
    for (let j = 0; j < K; j++) {
      const v = pd[r * K + j]!;
      if (v > 0) h -= v * Math.log(v);
    }
    y[r] = h;
  }
  return record1("entropy", [p], y, p.shape.slice(0, -1), ([g]) => {
    const gx = allocF32(p.size);
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < K; j++) {
        const v = pd[r * K + j]!;
        // At p = 0 the derivative diverges; the op treats 0·ln 0 as a constant 0.
        gx[r * K + j] = v > 0 ? -g![r]! * (Math.log(v) + 1) : 0;
      }
    }
    return [gx];
  });
}

/**
 * Σ x over the positions whose target ≠ IGNORE_INDEX, over their count N: [1] (NaN, zero
 * gradient, when N = 0); x has as many elements as targets.
 */
export function maskedMean(x: Tensor, targets: IntTensor): Tensor {
  if (x.size !== targets.size)
    throw new Error(
      `maskedMean: ${x.size} values for ${targets.size} targets (${shapeStr(x.shape)} vs ${shapeStr(targets.shape)})`,
    );
  const n = countTargets(targets);
  const td = targets.data;
  const xd = x.data;
  let s = 0;
  for (let i = 0; i < xd.length; i++) if (td[i] !== IGNORE_INDEX) s += xd[i]!;
  return record1("maskedMean", [x], Float32Array.of(n === 0 ? Number.NaN : s / n), [1], ([g]) => {
    const gx = allocF32(x.size);
    if (n === 0) return [gx];
    const v = g![0]! / n;
    for (let i = 0; i < gx.length; i++) if (td[i] !== IGNORE_INDEX) gx[i] = v;
    return [gx];
  });
}
