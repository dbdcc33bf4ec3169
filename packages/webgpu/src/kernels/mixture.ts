/*
 * p-weighted mixtures over loop steps, as @loop/exit-gate's mixture.ts, for logits x_r [M, V]
 * (one dispatch per step r, off = r·M) and pdf p [R, M]; n = M·V elementwise, first = 1 at r = 0:
 *   mixtureLogits:   y = Σ_r p(r)·x_r                                  (mixAccumulate, r in order)
 *     ∂x_r = g·p(r) (mixScaleRows),  ∂p(r)_m = Σ_v g·x_r (mixRowDot)
 *   mixtureLogProbs: t_r = ln p(r) + x_r − lse_r (lse_r the row log-sum-exp, mixRowLse; terms with
 *     p(r) = 0 drop out), y = max_r t_r + ln Σ_r e^{t_r − max}: mixLogMax then mixLogSum over r in
 *     order, then mixLogFinish;
 *     ∂p(r)_m = Σ_v g_v·e^{x_v − lse − y_v} (mixRowDot in its "posterior" form),
 *     ∂x_r = g·p·e^{x − lse − y} − e^{x − lse}·p·∂p(r)_m (mixLogProbsInput)
 * Every sum runs in a fixed order (rows tree-reduced, steps in order).
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { defineRowKernel, ROW_GROUP, ROW_LSE_WGSL } from "./row-reduce.js";

export const MIX_EW = 256;
const NEG = "-3.0e38";
const EW = `
${flatEntry(MIX_EW)}
  let pr = pdf[p.off + i / p.V];`;

export const mixAccumulateKernel = defineKernel({
  name: "mixture/accumulate",
  params: { n: "u32", V: "u32", off: "u32", first: "u32" },
  buffers: { x: "read", pdf: "read", y: "rw" },
  body: `${EW}
  var prev = 0.0;
  if (p.first == 0u) { prev = y[i]; }
  y[i] = prev + pr * x[i];
}`,
});

export const mixScaleRowsKernel = defineKernel({
  name: "mixture/scale-rows",
  params: { n: "u32", V: "u32", off: "u32" },
  buffers: { g: "read", pdf: "read", gx: "rw" },
  body: `${EW}
  gx[i] = g[i] * pr;
}`,
});

/**
 * out[off + m] = Σ_v g[m, v]·x[m, v] (posterior = 0), or Σ_v g·e^{x − lse[off + m] − y} (1).
 * One workgroup per row.
 */
export const mixRowDotKernel = defineRowKernel({
  name: "mixture/row-dot",
  params: { rows: "u32", V: "u32", off: "u32", posterior: "u32" },
  buffers: { x: "read", g: "read", lse: "read", y: "read", out: "rw" },
  main: `
  let o = row * p.V;
  var acc = 0.0;
  if (p.posterior == 0u) {
    for (var v = li; v < p.V; v += ${ROW_GROUP}u) { acc += g[o + v] * x[o + v]; }
  } else {
    let l = lse[p.off + row];
    for (var v = li; v < p.V; v += ${ROW_GROUP}u) { acc += g[o + v] * exp(x[o + v] - l - y[o + v]); }
  }
  let total = rowSum(acc, li);
  if (li == 0u) { out[p.off + row] = total; }
}`,
});

export const mixRowLseKernel = defineRowKernel({
  name: "mixture/row-lse",
  params: { rows: "u32", V: "u32", off: "u32" },
  buffers: { x: "read", lse: "rw" },
  helpers: [ROW_LSE_WGSL],
  main: `
  let l = rowLse(row * p.V, li);
  if (li == 0u) { lse[p.off + row] = l; }
}`,
});

const TERM = `
  let m = i / p.V;
  var t = ${NEG};
  if (pr > 0.0) { t = log(pr) + x[i] - lse[p.off + m]; }`;

export const mixLogMaxKernel = defineKernel({
  name: "mixture/log-max",
  params: { n: "u32", V: "u32", off: "u32", first: "u32" },
  buffers: { x: "read", pdf: "read", lse: "read", mx: "rw" },
  body: `${EW}${TERM}
  if (p.first != 0u) { mx[i] = t; } else { mx[i] = max(mx[i], t); }
}`,
});

export const mixLogSumKernel = defineKernel({
  name: "mixture/log-sum",
  params: { n: "u32", V: "u32", off: "u32", first: "u32" },
  buffers: { x: "read", pdf: "read", lse: "read", mx: "read", y: "rw" },
  body: `${EW}${TERM}
  var prev = 0.0;
  if (p.first == 0u) { prev = y[i]; }
  var e = 0.0;
  if (pr > 0.0) { e = exp(t - mx[i]); }
  y[i] = prev + e;
}`,
});

export const mixLogFinishKernel = defineKernel({
  name: "mixture/log-finish",
  params: { n: "u32" },
  buffers: { mx: "read", y: "rw" },
  body: `
${flatEntry(MIX_EW)}
  y[i] = mx[i] + log(y[i]);
}`,
});

export const mixLogProbsInputKernel = defineKernel({
  name: "mixture/log-probs-input-grad",
  params: { n: "u32", V: "u32", off: "u32" },
  buffers: { x: "read", pdf: "read", lse: "read", y: "read", g: "read", gp: "read", gx: "rw" },
  body: `${EW}
  let m = i / p.V;
  let sig = exp(x[i] - lse[p.off + m]);
  gx[i] = g[i] * pr * exp(x[i] - lse[p.off + m] - y[i]) - sig * pr * gp[p.off + m];
}`,
});
