/*
 * Recurrent decoding on any backend, the state on the backend's memory (docs/model.md §1; the
 * CPU's decode.ts and decode-early-exit.ts for a `DeviceModel`). One state per (loop step, layer):
 * a Mamba-2 conv/SSM state or a KV cache, made by the backend and advanced by its two decode
 * kernels (`DecodeOps` of @loop/tensor) inside the mixers' step functions (`mamba2StepMix`,
 * `attentionStepMix`); the layers, the loop, the readout, the head and the gate are the model's
 * ops. A token reads back its logits (and, under an exit rule, what the rule reads of each loop
 * step: a gate logit, the logits or the readout); nothing else leaves the device.
 *
 * Early exit is the CPU's (decode-early-exit.ts): a row that exits at step z skips steps z+1..R;
 * their KV caches get the entry of h(z) at the token's position and, with skipped "propagate",
 * their Mamba-2 states take h(z) in; its logits are logits(z). Rows exit independently: the rows
 * still running are stepped as state rows of the same states (the kernels' `rows`).
 */
import { attentionStepMix } from "@loop/attention";
import { OnlineExitRule, type StepSignals } from "@loop/exit-gate";
import { mamba2StepMix } from "@loop/ssm-kernels";
import type { DecodeOps, KvCacheState, Mamba2DecodeState } from "@loop/tensor";
import { isAttentionLayer } from "./config.js";
import type { EarlyExitSettings } from "./decode-early-exit.js";
import type { DeviceModel, DeviceModelOps } from "./device-model.js";
import { layerForward } from "./looped-forward.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";

/** What device decoding needs of a backend: the model's ops and the two decode kernels. */
export type DecodeBackendOps<T, I> = DeviceModelOps<T, I> & DecodeOps<T, I>;

/** One layer's decoding state on the backend: a Mamba-2 state or a KV cache. */
export type DeviceLayerState<T> = Mamba2DecodeState<T> | KvCacheState<T>;

/** The decoding state of a device model: one layer state per (loop step, layer), the position. */
export interface DeviceDecodeState<T> {
  batch: number;
  capacity: number;
  /** Tokens consumed so far. */
  position: number;
  /** states[r][i]: loop step r (0-based), layer i. */
  states: DeviceLayerState<T>[][];
}

/** Whether a backend's ops include the decode kernels. */
export function hasDecodeOps<T, I>(ops: DeviceModelOps<T, I>): ops is DecodeBackendOps<T, I> {
  const o = ops as Partial<DecodeOps<T, I>>;
  return typeof o.mamba2Step === "function" && typeof o.attendStep === "function";
}

/** A fresh state for `batch` sequences of at most `capacity` tokens, zeros on the backend. */
export function initDeviceDecodeState<T, I>(
  ops: DecodeBackendOps<T, I>,
  dm: DeviceModel<T, I>,
  batch: number,
  capacity: number,
): DeviceDecodeState<T> {
  if (!Number.isInteger(batch) || batch < 1)
    throw new Error(`initDeviceDecodeState: batch must be an integer ≥ 1, got ${batch}`);
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new Error(`initDeviceDecodeState: capacity must be an integer ≥ 1, got ${capacity}`);
  const cfg = dm.config;
  const zeros = (shape: number[]) =>
    ops.upload(new Float32Array(shape.reduce((a, b) => a * b, 1)), shape, { persistent: true });
  const layerState = (i: number): DeviceLayerState<T> => {
    if (isAttentionLayer(cfg, i)) {
      const a = attentionConfig(cfg);
      const shape = [batch, a.nKvHeads, capacity, a.dModel / a.nHeads];
      return { k: zeros(shape), v: zeros(shape) };
    }
    const m = mamba2Config(cfg);
    const Di = m.expand * m.dModel;
    const H = Di / m.headdim;
    const C = Di + 2 * m.nGroups * m.dState;
    return {
      conv: zeros([batch, C, m.dConv - 1]),
      ssm: zeros([batch, H, m.headdim, m.dState]),
    };
  };
  const states = Array.from({ length: cfg.n_loops }, () =>
    Array.from({ length: cfg.n_layers }, (_v, i) => layerState(i)),
  );
  return { batch, capacity, position: 0, states };
}

/** Give every state's memory back to the backend. */
export function disposeDeviceDecodeState<T, I>(
  ops: DecodeBackendOps<T, I>,
  st: DeviceDecodeState<T>,
): void {
  for (const row of st.states)
    for (const s of row) for (const t of Object.values(s) as T[]) ops.dispose(t);
}

/** What one token's decoding gives back: each row's logits (at its exit step) and exit step. */
export interface DeviceTokenResult {
  /** logits(z_b) of each row, [B, V] row-major; empty when not asked for. */
  logits: Float32Array;
  /** Exit step z_b of each row, 1-based. */
  exitSteps: Int32Array;
}

/**
 * Layer i of loop step r on h [n, D] for the state rows `rows` (null: all): the residual layer
 * around the mixer's decode step; with `absorb`, the mixer's state update alone (null).
 */
function layerStep<T, I>(
  ops: DecodeBackendOps<T, I>,
  dm: DeviceModel<T, I>,
  st: DeviceDecodeState<T>,
  i: number,
  r: number,
  h: T,
  n: number,
  rows: I | null,
  absorb = false,
): T | null {
  const cfg = dm.config;
  const lw = (name: string) => dm.weight(`backbone.layers.${i}.${name}`);
  const mw = (name: string) => lw(`mixer.${name}`);
  const state = st.states[r]![i]!;
  const mix = (u: T): T | null =>
    isAttentionLayer(cfg, i)
      ? attentionStepMix(
          ops,
          attentionConfig(cfg),
          mw,
          u,
          state as KvCacheState<T>,
          st.position,
          n,
          {
            rows,
            absorb,
          },
        )
      : mamba2StepMix(ops, mamba2Config(cfg), mw, u, state as Mamba2DecodeState<T>, {
          rows,
          absorb,
        });
  if (absorb) {
    mix(ops.rmsnorm(h, lw("norm.weight"), cfg.norm_eps));
    return null;
  }
  return layerForward(ops, cfg, lw, h, (u) => mix(u)!);
}

/** Rows `js` of x [n, D] (a gather, as an embedding lookup). */
export function gatherRows<T, I>(ops: DecodeBackendOps<T, I>, x: T, js: readonly number[]): T {
  return ops.embedding(ops.uploadInt(Int32Array.from(js), [js.length]), x);
}

/** What `rule` reads of one loop step's readouts ro [n, D], read back once for every row. */
async function signalsOf<T, I>(
  ops: DecodeBackendOps<T, I>,
  dm: DeviceModel<T, I>,
  rule: OnlineExitRule,
  ro: T,
): Promise<(j: number) => StepSignals> {
  const { d_model: D, vocab_size: V } = dm.config;
  const gate = rule.needs.gate ? await ops.read(ops.noGrad(() => dm.gateLogits([ro]))) : null;
  const logits = rule.needs.logits ? await ops.read(ops.noGrad(() => dm.head(ro))) : null;
  const state = rule.needs.state ? await ops.read(ro) : null;
  return (j) => {
    const s: StepSignals = {};
    if (gate) s.gateLogit = gate[j]!;
    if (logits) s.logits = logits.subarray(j * V, (j + 1) * V);
    if (state) s.state = state.subarray(j * D, (j + 1) * D);
    return s;
  };
}

/**
 * Feed one token per row (ids of length B) through the model on the backend, every row through
 * all R steps (`early` null) or under early exit (`early`, from `earlyExitSettings`). With
 * `logits` false the head is not run (a prompt token whose logits nobody reads; full depth only).
 */
export async function deviceDecodeToken<T, I>(
  ops: DecodeBackendOps<T, I>,
  dm: DeviceModel<T, I>,
  st: DeviceDecodeState<T>,
  ids: ArrayLike<number>,
  early: EarlyExitSettings | null,
  logits = true,
): Promise<DeviceTokenResult> {
  const op = "deviceDecodeToken";
  const B = st.batch;
  if (ids.length !== B) throw new Error(`${op}: expected ${B} token ids, got ${ids.length}`);
  if (st.position >= st.capacity)
    throw new Error(`${op}: position ${st.position} exceeds the decode capacity ${st.capacity}`);
  const { n_loops: R, n_layers: N, vocab_size: V } = dm.config;
  const exitSteps = new Int32Array(B);
  const out = new Float32Array(logits ? B * V : 0);
  const run = <R2>(fn: () => R2): R2 => ops.noGrad(fn);
  let h = run(() =>
    ops.embedding(
      ops.uploadInt(Int32Array.from(ids), [B]),
      dm.weight("backbone.embeddings.weight"),
    ),
  );
  if (!early) {
    h = run(() => {
      let x = h;
      for (let r = 0; r < R; r++) {
        for (let i = 0; i < N; i++) x = layerStep(ops, dm, st, i, r, x, B, null)!;
        x = dm.endOfStep(x);
      }
      return x;
    });
    exitSteps.fill(R);
    if (logits) out.set(await ops.read(run(() => dm.head(dm.readout(h)))));
    st.position++;
    return { logits: out, exitSteps };
  }
  const { maxStep, skipped, skippedWork } = early;
  // a rule keeps per-row state over one token's steps (the gate's running survival): fresh per token
  const rule = early.rule ? new OnlineExitRule(early.rule.rule, B, R, op) : null;
  // rows still running (state rows), and the exited ones by exit step: their h(z) and rows
  let active = Array.from({ length: B }, (_v, b) => b);
  const exited: { rows: I; n: number; h: T }[] = [];
  for (let r = 0; r < R; r++) {
    if (!active.length && !skippedWork) break;
    const rowsT =
      active.length === B ? null : ops.uploadInt(Int32Array.from(active), [active.length]);
    h = run(() => {
      let x = h;
      for (let i = 0; i < N; i++) {
        if (isAttentionLayer(dm.config, i) || skipped === "propagate")
          for (const g of exited) layerStep(ops, dm, st, i, r, g.h, g.n, g.rows, true);
        if (active.length) x = layerStep(ops, dm, st, i, r, x, active.length, rowsT)!;
      }
      return active.length ? dm.endOfStep(x) : x;
    });
    if (!active.length) continue;
    const ro = run(() => dm.readout(h));
    let exits: boolean[];
    if (r === maxStep - 1) exits = active.map(() => true);
    else if (rule) {
      const signals = await signalsOf(ops, dm, rule, ro);
      exits = active.map((b, j) => rule.step(b, r, signals(j)));
    } else exits = active.map(() => false);
    const leaving = active.filter((_b, j) => exits[j]);
    if (!leaving.length) continue;
    const js = active.flatMap((_b, j) => (exits[j] ? [j] : []));
    const all = leaving.length === active.length;
    if (logits) {
      const lg = await ops.read(run(() => dm.head(all ? ro : gatherRows(ops, ro, js))));
      leaving.forEach((b, k) => {
        out.set(lg.subarray(k * V, (k + 1) * V), b * V);
      });
    }
    for (const b of leaving) exitSteps[b] = r + 1;
    if (r < R - 1 && skippedWork)
      exited.push({
        rows: ops.uploadInt(Int32Array.from(leaving), [leaving.length]),
        n: leaving.length,
        h: all ? h : run(() => gatherRows(ops, h, js)),
      });
    const keep = active.flatMap((_b, j) => (exits[j] ? [] : [j]));
    active = active.filter((_b, j) => !exits[j]);
    if (active.length) h = run(() => gatherRows(ops, h, keep));
  }
  st.position++;
  return { logits: out, exitSteps };
}
