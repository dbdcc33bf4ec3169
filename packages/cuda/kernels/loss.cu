/*
 * Cross-entropy and the exit gate's ops (docs/exit-gate.md), one block of 256 threads per row of
 * logits, one thread per token position for the gate:
 *   ce_rows:    lse[m] = logsumexp(logits[m,:]), loss[m] = lse[m] − logits[m, t_m]
 *               (0 where t_m = −100, the ignored target)
 *   masked_mean: out[0] = Σ_{m: t_m ≠ −100} vals[m] / (N·div), count[0] = N (NaN when N = 0);
 *               one block, fixed order
 *   ce_scale:   gce[m] = g[0]/N for counted m, else 0 (the mean's backward, no read-back)
 *   ce_rows_bwd: glogits[m,:] (+)= gce[m]·(softmax(logits[m,:]) − onehot(t_m))
 *   gate_fwd:   a[m] = b + Σ_d w[d]·x[m,d] (one warp per row); gate_gx: gx[m,d] = g[m]·w[d]
 *   exit_pdf:   p(r) = λ(r)·S(r−1), p(R) = S(R−1) from a [R,M] in log space, double (log-pdf.ts)
 *   stage1:     f_m = Σ_r p(r)(ℓ(r) + β·ln p(r)); backward ∂ℓ = s·p, ∂a via the log-pdf backward
 *   stage2:     f_m = Σ_{r≥1} w·softplus(a) + (1−w)·softplus(−a), w = σ(k·(max(0,ℓ(r−1)−ℓ(r))−γ));
 *               ∂a(r) = s·(σ(a) − 1 + w) for r ≥ 1
 */
#include "common.cuh"

#define IGNORE (-100)

KERNEL void __launch_bounds__(256) ce_rows(int V, const float *logits, const int *targets,
                                           float *loss, float *lse) {
  __shared__ float scratch[32];
  const float *x = logits + (long long)blockIdx.x * V;
  float mx = -LOOP_INF;
  for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, x[j]);
  mx = blockMax(mx, scratch);
  float s = 0.f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j] - mx);
  s = blockSum(s, scratch);
  if (threadIdx.x == 0) {
    float l = mx + logf(s);
    int t = targets[blockIdx.x];
    lse[blockIdx.x] = l;
    /* a target outside [0, V) other than the ignored one: NaN, not an out-of-bounds read */
    loss[blockIdx.x] = t == IGNORE ? 0.f : (t < 0 || t >= V) ? LOOP_NAN : l - x[t];
  }
}

KERNEL void __launch_bounds__(256) masked_mean(long long M, const int *targets, const float *vals,
                                               float div, float *out, float *count) {
  __shared__ float scratch[32];
  float s = 0.f, c = 0.f;
  for (long long m = threadIdx.x; m < M; m += blockDim.x)
    if (targets[m] != IGNORE) {
      s += vals[m];
      c += 1.f;
    }
  s = blockSum(s, scratch);
  c = blockSum(c, scratch);
  if (threadIdx.x == 0) {
    out[0] = c == 0.f ? LOOP_NAN : s / (c * div);
    count[0] = c;
  }
}

KERNEL void ce_scale(long long M, const int *targets, const float *g, const float *count,
                     float *gce) {
  FOR_EACH(m, M) gce[m] = (targets[m] != IGNORE && count[0] > 0.f) ? g[0] / count[0] : 0.f;
}

KERNEL void __launch_bounds__(256) ce_rows_bwd(int V, const float *gce, const float *logits,
                                               const int *targets, const float *lse, float *gx,
                                               int acc) {
  long long o = (long long)blockIdx.x * V;
  int t = targets[blockIdx.x];
  float s = t == IGNORE ? 0.f : gce[blockIdx.x], l = lse[blockIdx.x];
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    float v = s * (expf(logits[o + j] - l) - (j == t ? 1.f : 0.f));
    gx[o + j] = acc ? gx[o + j] + v : v;
  }
}

KERNEL void gate_fwd(long long M, int D, const float *x, const float *w, const float *b,
                     float *a) {
  long long m = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (m >= M) return;
  float s = 0.f;
  for (int d = lane; d < D; d += 32) s += w[d] * x[m * D + d];
  s = warpSum(s);
  if (lane == 0) a[m] = s + b[0];
}

KERNEL void gate_gx(long long M, int D, const float *g, const float *w, float *gx, int acc) {
  FOR_EACH(i, M * D) {
    float v = g[i / D] * w[i % D];
    gx[i] = acc ? gx[i] + v : v;
  }
}

/* gw[d] (+)= Σ_m g[m]·x[m,d] */
KERNEL void gate_gw(long long M, int D, const float *g, const float *x, float *gw, int acc) {
  int d = blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= D) return;
  float s = 0.f;
  for (long long m = 0; m < M; m++) s += g[m] * x[m * D + d];
  gw[d] = acc ? gw[d] + s : s;
}

/* out[0] (+)= Σ x (one block, fixed order) */
KERNEL void __launch_bounds__(256) sum_all(long long n, const float *x, float *out, int acc) {
  __shared__ float scratch[32];
  float s = 0.f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  s = blockSum(s, scratch);
  if (threadIdx.x == 0) out[0] = acc ? out[0] + s : s;
}

/* u = ln p into u[R·M] for position m (log-pdf.ts logPdfForward) */
__device__ void logPdf(int R, long long M, long long m, const float *a, double *u) {
  double logSurv = 0;
  for (int r = 0; r < R; r++) {
    double x = a[r * M + m];
    if (r == R - 1) {
      u[r] = logSurv;
    } else {
      u[r] = logSurv - softplusd_(-x);
      logSurv -= softplusd_(x);
    }
  }
}

/* ∂a from c = ∂L/∂u (log-pdf.ts logPdfBackward) */
__device__ void logPdfBack(int R, long long M, long long m, const float *a, const double *c,
                           float *ga, int acc) {
  double tail = 0;
  for (int j = R - 1; j >= 0; j--) {
    long long i = j * M + m;
    double v = 0;
    if (j < R - 1) {
      double l = sigmoidd_(a[i]);
      v = c[j] * (1 - l) - l * tail;
    }
    tail += c[j];
    ga[i] = acc ? ga[i] + (float)v : (float)v;
  }
}

#define RMAX 64
KERNEL void exit_pdf_fwd(int R, long long M, const float *a, float *p) {
  FOR_EACH(m, M) {
    double u[RMAX];
    logPdf(R, M, m, a, u);
    for (int r = 0; r < R; r++) p[r * M + m] = (float)exp(u[r]);
  }
}
KERNEL void exit_pdf_bwd(int R, long long M, const float *g, const float *a, float *ga, int acc) {
  FOR_EACH(m, M) {
    double u[RMAX];
    logPdf(R, M, m, a, u);
    for (int r = 0; r < R; r++) u[r] = g[r * M + m] * exp(u[r]);
    logPdfBack(R, M, m, a, u, ga, acc);
  }
}

KERNEL void stage1_fwd(int R, long long M, float beta, const float *a, const float *ce,
                       float *f) {
  FOR_EACH(m, M) {
    double u[RMAX];
    logPdf(R, M, m, a, u);
    double s = 0;
    for (int r = 0; r < R; r++) s += exp(u[r]) * (ce[r * M + m] + beta * u[r]);
    f[m] = (float)s;
  }
}
KERNEL void stage1_bwd(int R, long long M, float beta, const float *g, const float *count,
                       const float *a, const float *ce, const int *targets, float *ga,
                       float *gce) {
  FOR_EACH(m, M) {
    double u[RMAX];
    bool on = targets[m] != IGNORE && count[0] > 0.f;
    double s = on ? (double)g[0] / count[0] : 0.0;
    logPdf(R, M, m, a, u);
    for (int r = 0; r < R; r++) {
      double p = exp(u[r]);
      if (gce) gce[r * M + m] = (float)(s * p);
      u[r] = s * p * (ce[r * M + m] + beta * (u[r] + 1));
    }
    if (ga) logPdfBack(R, M, m, a, u, ga, 0);
  }
}

__device__ __forceinline__ double contLabel(const float *ce, long long M, long long i, double k,
                                            double gamma) {
  double imp = fmax(0.0, (double)ce[i - M] - (double)ce[i]);
  return sigmoidd_(k * (imp - gamma));
}
KERNEL void stage2_fwd(int R, long long M, float k, float gamma, const float *a, const float *ce,
                       float *f) {
  FOR_EACH(m, M) {
    double s = 0;
    for (int r = 1; r < R; r++) {
      long long i = r * M + m;
      double w = contLabel(ce, M, i, k, gamma), x = a[i];
      s += w * softplusd_(x) + (1 - w) * softplusd_(-x);
    }
    f[m] = (float)s;
  }
}
KERNEL void stage2_bwd(int R, long long M, float k, float gamma, const float *g,
                       const float *count, const float *a, const float *ce, const int *targets,
                       float *ga) {
  FOR_EACH(m, M) {
    bool on = targets[m] != IGNORE && count[0] > 0.f;
    double s = on ? (double)g[0] / ((double)count[0] * R) : 0.0;
    ga[m] = 0.f;
    for (int r = 1; r < R; r++) {
      long long i = r * M + m;
      ga[i] = on ? (float)(s * (sigmoidd_(a[i]) - 1 + contLabel(ce, M, i, k, gamma))) : 0.f;
    }
  }
}
