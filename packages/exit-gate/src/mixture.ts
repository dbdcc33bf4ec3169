/*
 * p-weighted mixtures over loop steps (docs/exit-gate.md "Inference": "the p-weighted mixture of the
 * per-step logits"), two fused ops:
 *   mixtureLogits:   y[m, v] = Σ_r p(r)_m · logits(r)[m, v]             (docs/exit-gate.md, literally)
 *     ∂logits(r)[m, v] = g[m, v]·p(r)_m,   ∂p(r)_m = Σ_v g[m, v]·logits(r)[m, v]
 *   mixtureLogProbs: y[m, v] = ln Σ_r p(r)_m · softmax(logits(r)[m])_v  (mixture of the
 *     predictive distributions, returned as log-probabilities). With the posterior
 *     π(r)_{m,v} = p(r)_m·softmax(logits(r)[m])_v / e^{y[m,v]} and σ(r) = softmax(logits(r)[m]):
 *     ∂logits(r)[m, u] = g_u·π(r)_u − σ(r)_u·Σ_v g_v·π(r)_v,
 *     ∂p(r)_m = Σ_v g_v·σ(r)_v·e^{−y_v}   (no division by p, so p = 0 is fine).
 * Shapes: logits R × [...S, V], p [R, ...S] → [...S, V].
 */
import type { Tensor } from "@loop/tensor";
import { allocF32, record1 } from "@loop/tensor/kernel";
import { checkPerStep, checkShape } from "./shapes.js";

function check(logitsPerStep: readonly Tensor[], pdf: Tensor, op: string) {
  const s = checkPerStep(logitsPerStep, "logitsPerStep", op);
  const R = logitsPerStep.length;
  checkShape(pdf, [R, ...s.slice(0, -1)], "pdf", op);
  const V = s[s.length - 1]!;
  return { s, R, V, M: V === 0 ? 0 : logitsPerStep[0]!.size / V };
}

/**
 * Σ_r p_r · logits(r): the exit-distribution mixture of every step's logits, [… , V]; differentiable.
 */
export function mixtureLogits(logitsPerStep: readonly Tensor[], pdf: Tensor): Tensor {
  const { s, R, V, M } = check(logitsPerStep, pdf, "mixtureLogits");
  const p = pdf.data;
  const y = new Float64Array(M * V);
  for (let r = 0; r < R; r++) {
    const x = logitsPerStep[r]!.data;
    for (let m = 0; m < M; m++) {
      const w = p[r * M + m]!;
      for (let v = 0; v < V; v++) y[m * V + v]! += w * x[m * V + v]!;
    }
  }
  const out = allocF32(M * V);
  out.set(y);
  return record1("mixtureLogits", [...logitsPerStep, pdf], out, s, ([g], needs) => {
    const gy = g!;
    const grads: (Float32Array | null)[] = logitsPerStep.map((_x, r) => {
      if (!needs[r]) return null;
      const gx = new Float32Array(M * V);
      for (let m = 0; m < M; m++) {
        const w = p[r * M + m]!;
        for (let v = 0; v < V; v++) gx[m * V + v] = gy[m * V + v]! * w;
      }
      return gx;
    });
    let gp: Float32Array | null = null;
    if (needs[R]) {
      gp = new Float32Array(R * M);
      for (let r = 0; r < R; r++) {
        const x = logitsPerStep[r]!.data;
        for (let m = 0; m < M; m++) {
          let acc = 0;
          for (let v = 0; v < V; v++) acc += gy[m * V + v]! * x[m * V + v]!;
          gp[r * M + m] = acc;
        }
      }
    }
    grads.push(gp);
    return grads;
  });
}

/**
 * log Σ_r p_r · softmax(logits(r)): the log-probabilities of the exit-distribution mixture,
 * [… , V]; differentiable.
 */
export function mixtureLogProbs(logitsPerStep: readonly Tensor[], pdf: Tensor): Tensor {
  const { s, R, V, M } = check(logitsPerStep, pdf, "mixtureLogProbs");
  const p = pdf.data;
  for (let i = 0; i < p.length; i++) {
    if (!(p[i]! >= 0)) throw new Error(`mixtureLogProbs: pdf[${i}] is ${p[i]}, expected ≥ 0`);
  }
  // Row log-sum-exp of every step's logits: lse[r, m].
  const lse = new Float64Array(R * M);
  for (let r = 0; r < R; r++) {
    const x = logitsPerStep[r]!.data;
    for (let m = 0; m < M; m++) {
      let mx = Number.NEGATIVE_INFINITY;
      for (let v = 0; v < V; v++) mx = Math.max(mx, x[m * V + v]!);
      let acc = 0;
      for (let v = 0; v < V; v++) acc += Math.exp(x[m * V + v]! - mx);
      lse[r * M + m] = mx + Math.log(acc);
    }
  }
  // y = logsumexp_r (ln p(r) + x(r) − lse(r)), max-shifted over r.
  const y = new Float64Array(M * V);
  const term = new Float64Array(R);
  for (let m = 0; m < M; m++) {
    for (let v = 0; v < V; v++) {
      let mx = Number.NEGATIVE_INFINITY;
      for (let r = 0; r < R; r++) {
        const t = Math.log(p[r * M + m]!) + logitsPerStep[r]!.data[m * V + v]! - lse[r * M + m]!;
        term[r] = t;
        if (t > mx) mx = t;
      }
      let acc = 0;
      for (let r = 0; r < R; r++) acc += Math.exp(term[r]! - mx);
      y[m * V + v] = mx + Math.log(acc);
    }
  }
  const out = allocF32(M * V);
  out.set(y);
  return record1("mixtureLogProbs", [...logitsPerStep, pdf], out, s, ([g], needs) => {
    const gy = g!;
    const grads: (Float32Array | null)[] = [];
    const gp = needs[R] ? new Float32Array(R * M) : null;
    for (let r = 0; r < R; r++) {
      const x = logitsPerStep[r]!.data;
      const gx = needs[r] ? new Float32Array(M * V) : null;
      for (let m = 0; m < M; m++) {
        const pr = p[r * M + m]!;
        const l = lse[r * M + m]!;
        let gpi = 0; // Σ_v g_v·π_v
        let gsig = 0; // Σ_v g_v·σ_v·e^{−y_v}
        for (let v = 0; v < V; v++) {
          const i = m * V + v;
          const sigOverMix = Math.exp(x[i]! - l - y[i]!);
          gsig += gy[i]! * sigOverMix;
          gpi += gy[i]! * pr * sigOverMix;
        }
        if (gp) gp[r * M + m] = gsig;
        if (gx) {
          for (let v = 0; v < V; v++) {
            const i = m * V + v;
            const sig = Math.exp(x[i]! - l);
            gx[i] = gy[i]! * pr * Math.exp(x[i]! - l - y[i]!) - sig * gpi;
          }
        }
      }
      grads.push(gx);
    }
    grads.push(gp);
    return grads;
  });
}
