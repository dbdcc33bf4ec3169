/*
 * SSD scan, sequential reference (the oracle), docs/model.md §3.5 without the D term:
 *   per head h, group g = floor(h·G/H), state S ∈ R^{P×N} (S_{-1} = initial state or 0):
 *     S_t = exp(dt_t·A_h)·S_{t-1} + dt_t·(x_t ⊗ B_t[g]),   y_t = S_t · C_t[g]
 * Shapes: see ssd-shape.ts. Returns y [B,T,H,P] and the final state S_{T-1} [B,H,P,N].
 * State arithmetic runs in float64 so the oracle is more accurate than what it checks.
 * Backward (reverse sweep with dS the gradient of S_t):
 *   dS += gy_t ⊗ C_t;  dC_t += Sᵀ_t gy_t;  dx_t += dt·dS·B_t;  dB_t += dt·dSᵀ·x_t;
 *   ddt_t += Σ dS⊙(x_t⊗B_t) + A·a·Σ dS⊙S_{t-1};  dA += dt·a·Σ dS⊙S_{t-1};  dS ← a·dS  (a = e^{dt·A}).
 */
import type { Tensor } from "@loop/tensor";
import { allocF32, record } from "@loop/tensor/kernel";
import { type SsdArrays, type SsdGrads, type SsdShape, ssdShape } from "./ssd-shape.js";

/** Step t of head h (group g) in row b: dt, the decay e^{dt·A_h}, and the x/y and B/C offsets. */
function stepAt(s: SsdShape, a: SsdArrays, b: number, h: number, g: number, t: number) {
  const { seqLen: T, nHeads: H, headdim: P, nGroups: G, dState: N } = s;
  const dtv = a.dt[(b * T + t) * H + h]!;
  return {
    dtv,
    decay: Math.exp(dtv * a.A[h]!),
    xOff: ((b * T + t) * H + h) * P,
    bcOff: ((b * T + t) * G + g) * N,
  };
}

/** Forward of the sequential recurrence on raw arrays. */
export function ssdScanRefForward(
  s: SsdShape,
  a: SsdArrays,
): { y: Float32Array; state: Float32Array } {
  const { batch, seqLen: T, nHeads: H, headdim: P, nGroups: G, dState: N } = s;
  const y = allocF32(batch * T * H * P);
  const state = allocF32(batch * H * P * N);
  const S = new Float64Array(P * N);
  const hpg = H / G;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / hpg);
      const sOff = (b * H + h) * P * N;
      for (let i = 0; i < P * N; i++) S[i] = a.s0 ? a.s0[sOff + i]! : 0;
      for (let t = 0; t < T; t++) {
        const { dtv, decay, xOff, bcOff } = stepAt(s, a, b, h, g, t);
        for (let p = 0; p < P; p++) {
          const xp = dtv * a.x[xOff + p]!;
          let acc = 0;
          for (let n = 0; n < N; n++) {
            const v = decay * S[p * N + n]! + xp * a.B[bcOff + n]!;
            S[p * N + n] = v;
            acc += v * a.C[bcOff + n]!;
          }
          y[xOff + p] = acc;
        }
      }
      for (let i = 0; i < P * N; i++) state[sOff + i] = S[i]!;
    }
  }
  return { y, state };
}

/**
 * Backward of the sequential recurrence: `gy` [B,T,H,P] and `gState` [B,H,P,N] (either may be
 * null = zero). States are recomputed per (batch, head), so memory is T·P·N float64 at a time.
 */
export function ssdScanRefBackward(
  s: SsdShape,
  a: SsdArrays,
  gy: Float32Array | null,
  gState: Float32Array | null,
): SsdGrads {
  const { batch, seqLen: T, nHeads: H, headdim: P, nGroups: G, dState: N } = s;
  const PN = P * N;
  const hpg = H / G;
  const gx = new Float32Array(a.x.length);
  const gdt = new Float32Array(a.dt.length);
  const gA = new Float32Array(H);
  const gB = new Float32Array(a.B.length);
  const gC = new Float32Array(a.C.length);
  const gs0 = a.s0 ? new Float32Array(a.s0.length) : null;
  const states = new Float64Array((T + 1) * PN);
  const dS = new Float64Array(PN);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / hpg);
      const Ah = a.A[h]!;
      const sOff = (b * H + h) * PN;
      // states[t+1] = S_t, states[0] = initial state.
      for (let i = 0; i < PN; i++) states[i] = a.s0 ? a.s0[sOff + i]! : 0;
      for (let t = 0; t < T; t++) {
        const { dtv, decay, xOff, bcOff } = stepAt(s, a, b, h, g, t);
        const prev = t * PN;
        const cur = prev + PN;
        for (let p = 0; p < P; p++) {
          const xp = dtv * a.x[xOff + p]!;
          for (let n = 0; n < N; n++) {
            states[cur + p * N + n] = decay * states[prev + p * N + n]! + xp * a.B[bcOff + n]!;
          }
        }
      }
      for (let i = 0; i < PN; i++) dS[i] = gState ? gState[sOff + i]! : 0;
      let gAh = 0;
      for (let t = T - 1; t >= 0; t--) {
        const { dtv, decay, xOff, bcOff } = stepAt(s, a, b, h, g, t);
        const prev = t * PN;
        const cur = prev + PN;
        if (gy) {
          for (let p = 0; p < P; p++) {
            const gp = gy[xOff + p]!;
            for (let n = 0; n < N; n++) {
              dS[p * N + n]! += gp * a.C[bcOff + n]!;
              gC[bcOff + n]! += gp * states[cur + p * N + n]!;
            }
          }
        }
        let dDecay = 0;
        let dXB = 0;
        for (let p = 0; p < P; p++) {
          const xv = a.x[xOff + p]!;
          let dxp = 0;
          for (let n = 0; n < N; n++) {
            const d = dS[p * N + n]!;
            dDecay += d * states[prev + p * N + n]!;
            dXB += d * xv * a.B[bcOff + n]!;
            dxp += d * a.B[bcOff + n]!;
            gB[bcOff + n]! += dtv * d * xv;
          }
          gx[xOff + p] = dtv * dxp;
        }
        gdt[(b * T + t) * H + h] = dXB + dDecay * decay * Ah;
        gAh += dDecay * decay * dtv;
        for (let i = 0; i < PN; i++) dS[i]! *= decay;
      }
      gA[h]! += gAh;
      if (gs0) for (let i = 0; i < PN; i++) gs0[sOff + i] = dS[i]!;
    }
  }
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0 };
}

/** Options of an SSD scan: the initial state. */
export interface SsdScanOptions {
  /** Initial state [B,H,P,N] (zeros when absent); gradients flow into it. */
  initialState?: Tensor | null;
}

/** An SSD scan's output y [B,T,H,P] and final state [B,H,P,N]. */
export interface SsdScanResult {
  y: Tensor;
  state: Tensor;
}

/** The tensors of a scan: the inputs, the optional initial state and the optional D skip. */
export interface ScanTensors {
  x: Tensor;
  dt: Tensor;
  A: Tensor;
  B: Tensor;
  C: Tensor;
  s0: Tensor | null;
  D?: Tensor | null;
}

/** The raw arrays of a scan's tensors (no document resets). */
export function scanArrays(t: ScanTensors): SsdArrays {
  return {
    x: t.x.data,
    dt: t.dt.data,
    A: t.A.data,
    B: t.B.data,
    C: t.C.data,
    s0: t.s0 ? t.s0.data : null,
    D: t.D ? t.D.data : null,
  };
}

/** The tensors of a scan in tape order: x, dt, A, B, C, then s0 and D when present. */
export function tapeInputs(t: ScanTensors): Tensor[] {
  const inputs = [t.x, t.dt, t.A, t.B, t.C];
  if (t.s0) inputs.push(t.s0);
  if (t.D) inputs.push(t.D);
  return inputs;
}

/**
 * Record a scan on the tape: its outputs y (shaped like x) and final state [B,H,P,N] as tensors;
 * `grads` runs its backward, whose gradients go to the tensors in tapeInputs order.
 */
export function recordScan(
  op: string,
  s: SsdShape,
  t: ScanTensors,
  y: Float32Array,
  state: Float32Array,
  grads: (gy: Float32Array | null, gs: Float32Array | null) => SsdGrads,
): SsdScanResult {
  const [yt, st] = record(
    op,
    tapeInputs(t),
    [
      { data: y, shape: t.x.shape },
      { data: state, shape: [s.batch, s.nHeads, s.headdim, s.dState] },
    ],
    ([gy, gs]) => {
      const g = grads(gy ?? null, gs ?? null);
      const out: (Float32Array | null)[] = [g.x, g.dt, g.A, g.B, g.C];
      if (t.s0) out.push(g.s0);
      if (t.D) out.push(g.D ?? null);
      return out;
    },
  );
  return { y: yt!, state: st! };
}

/** Differentiable sequential SSD scan (the reference the chunked scan is tested against). */
export function ssdScanRef(
  x: Tensor,
  dt: Tensor,
  A: Tensor,
  B: Tensor,
  C: Tensor,
  opts: SsdScanOptions = {},
): SsdScanResult {
  const s0 = opts.initialState ?? null;
  const s = ssdShape("ssdScanRef", x, dt, A, B, C, s0);
  const t = { x, dt, A, B, C, s0 };
  const arrays = scanArrays(t);
  const { y, state } = ssdScanRefForward(s, arrays);
  return recordScan("ssdScanRef", s, t, y, state, (gy, gs) =>
    ssdScanRefBackward(s, arrays, gy, gs),
  );
}
