/*
 * Gate logits for every loop step (docs/exit-gate.md "Gate and exit distribution"):
 *   a[r, m] = Σ_d weight[0, d] · readout(r)[m, d] + bias[0]        λ(r)_m = sigmoid(a[r, m])
 * Shapes: readouts R × [...S, D], weight [1, D], bias [1] → a [R, ...S].
 * Backward: ∂readout(r)[m, d] = g[r, m] · weight[0, d];  ∂weight[0, d] = Σ_{r,m} g[r, m] ·
 * readout(r)[m, d];  ∂bias = Σ_{r,m} g[r, m]. One fused node instead of R linears and a stack.
 */
import { shapeStr, type Tensor } from "@loop/tensor";
import { allocF32, record1 } from "@loop/tensor/kernel";
import { checkPerStep } from "./shapes.js";

/** Σ_d w[d]·x[o + d] with four independent accumulators (a single chain is add-latency bound). */
function dot(w: Float32Array, x: Float32Array, o: number, D: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < D; d += 4) {
    s0 += w[d]! * x[o + d]!;
    s1 += w[d + 1]! * x[o + d + 1]!;
    s2 += w[d + 2]! * x[o + d + 2]!;
    s3 += w[d + 3]! * x[o + d + 3]!;
  }
  for (; d < D; d++) s0 += w[d]! * x[o + d]!;
  return s0 + s1 + s2 + s3;
}

/**
 * Gate logits [R, …] from the readouts of every loop step ([…, D] each), weight [1, D] and bias
 * [1]; differentiable.
 */
export function gateLogits(readouts: readonly Tensor[], weight: Tensor, bias: Tensor): Tensor {
  const op = "gateLogits";
  const s = checkPerStep(readouts, "readouts", op);
  const D = s[s.length - 1]!;
  if (weight.shape.length !== 2 || weight.shape[0] !== 1 || weight.shape[1] !== D) {
    throw new Error(`${op}: weight has shape ${shapeStr(weight.shape)}, expected [1,${D}]`);
  }
  if (bias.size !== 1 || bias.shape.length !== 1) {
    throw new Error(`${op}: bias has shape ${shapeStr(bias.shape)}, expected [1]`);
  }
  const R = readouts.length;
  const M = D === 0 ? 0 : readouts[0]!.size / D;
  const w = weight.data;
  const b = bias.data[0]!;
  const y = allocF32(R * M);
  for (let r = 0; r < R; r++) {
    const x = readouts[r]!.data;
    for (let m = 0; m < M; m++) y[r * M + m] = b + dot(w, x, m * D, D);
  }
  return record1(op, [...readouts, weight, bias], y, [R, ...s.slice(0, -1)], ([g], needs) => {
    const gy = g!;
    const grads: (Float32Array | null)[] = readouts.map((_x, r) => {
      if (!needs[r]) return null;
      const gx = new Float32Array(M * D);
      for (let m = 0; m < M; m++) {
        const gm = gy[r * M + m]!;
        if (gm === 0) continue;
        const o = m * D;
        for (let d = 0; d < D; d++) gx[o + d] = gm * w[d]!;
      }
      return gx;
    });
    let gw: Float32Array | null = null;
    if (needs[R]) {
      const acc = new Float64Array(D);
      for (let r = 0; r < R; r++) {
        const x = readouts[r]!.data;
        for (let m = 0; m < M; m++) {
          const gm = gy[r * M + m]!;
          if (gm === 0) continue;
          const o = m * D;
          for (let d = 0; d < D; d++) acc[d]! += gm * x[o + d]!;
        }
      }
      gw = Float32Array.from(acc);
    }
    let gb: Float32Array | null = null;
    if (needs[R + 1]) {
      let acc = 0;
      for (let i = 0; i < R * M; i++) acc += gy[i]!;
      gb = Float32Array.of(acc);
    }
    grads.push(gw, gb);
    return grads;
  });
}
