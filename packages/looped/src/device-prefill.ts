/*
 * The prompt on a device in one chunked pass (the CPU's prefill.ts for a `DeviceModel`): loop
 * step by loop step over every prompt token at once with the model's forward ops — the chunked
 * SSD scan, the tiled attention — and the decoding state written from that pass, so the tokens
 * after it decode as if the prompt had been fed one token at a time:
 *   - a Mamba-2 layer's SSM state is the scan's final state (kept, not copied);
 *   - its conv state is the last K−1 conv inputs: those positions' projections taken in by the
 *     decode kernel's state update (`mamba2Step` with `absorb`, on a throwaway SSM state), which
 *     leaves exactly them in the conv window;
 *   - an attention layer's KV cache gets every position's key and value (`attendStep` without a
 *     query, RoPE at the position).
 * From a fresh state only (position 0); full depth (an early-exiting prompt goes in token by
 * token). Shapes: tokens [B][T] → the last position's logits [B, V] on the host.
 */
import { attentionMix } from "@loop/attention";
import { type Mamba2Config, mamba2Mix } from "@loop/ssm-kernels";
import type { KvCacheState, Mamba2DecodeState } from "@loop/tensor";
import { isAttentionLayer } from "./config.js";
import { type DecodeBackendOps, type DeviceDecodeState, gatherRows } from "./device-decode.js";
import type { DeviceModel } from "./device-model.js";
import { layerForward } from "./looped-forward.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";

/** The decoding state's tensors (to keep when a backend gives back its transients). */
export function stateTensors<T>(st: DeviceDecodeState<T>): T[] {
  return st.states.flatMap((row) => row.flatMap((s) => Object.values(s) as T[]));
}

/** Fill layer i's Mamba-2 state at loop step r from the chunked pass over u [B, T, D]. */
function mambaPrefill<T, I>(
  ops: DecodeBackendOps<T, I>,
  cfg: Mamba2Config,
  w: (name: string) => T,
  u: T,
  state: Mamba2DecodeState<T>,
  B: number,
  T: number,
): { y: T; ssm: T } {
  const res = mamba2Mix(ops, cfg, w, u, {});
  const D = cfg.dModel;
  const flat = ops.reshape(u, [B * T, D]);
  const inProj = w("in_proj.weight");
  const scratch = ops.upload(new Float32Array(ops.shapeOf(state.ssm).reduce((a, b) => a * b, 1)), [
    ...ops.shapeOf(state.ssm),
  ]);
  const weights = {
    convWeight: w("conv1d.weight"),
    convBias: w("conv1d.bias"),
    dtBias: w("dt_bias"),
    aLog: w("A_log"),
    d: w("D"),
  };
  // the conv window after the prompt: its last K−1 inputs, shifted in oldest first
  for (let t = Math.max(0, T - (cfg.dConv - 1)); t < T; t++) {
    const zx = ops.linear(
      gatherRows(
        ops,
        flat,
        Array.from({ length: B }, (_v, b) => b * T + t),
      ),
      inProj,
    );
    ops.mamba2Step(cfg, zx, { conv: state.conv, ssm: scratch }, weights, { absorb: true });
  }
  ops.dispose(scratch);
  return { y: res.y, ssm: res.state };
}

/** Write every prompt position's key and value of layer i (loop step r) from u [B, T, D]. */
function attentionPrefill<T, I>(
  ops: DecodeBackendOps<T, I>,
  cfg: ReturnType<typeof attentionConfig>,
  w: (name: string) => T,
  u: T,
  cache: KvCacheState<T>,
  B: number,
  T: number,
): T {
  const hd = cfg.dModel / cfg.nHeads;
  const flat = ops.reshape(u, [B * T, cfg.dModel]);
  const k = ops.linear(flat, w("k_proj.weight"));
  const v = ops.linear(flat, w("v_proj.weight"));
  for (let t = 0; t < T; t++) {
    const idx = Array.from({ length: B }, (_v, b) => b * T + t);
    const at = (x: T) => ops.reshape(gatherRows(ops, x, idx), [B, cfg.nKvHeads, hd]);
    ops.attendStep(cache, null, at(k), at(v), t, { theta: cfg.ropeTheta });
  }
  return attentionMix(ops, cfg, w, u);
}

/**
 * The prompt `tokens` (B rows of T ids) into a fresh state `st` in one chunked pass at full
 * depth; returns the last position's logits [B, V] (read back).
 */
export async function devicePrefill<T, I>(
  ops: DecodeBackendOps<T, I>,
  dm: DeviceModel<T, I>,
  st: DeviceDecodeState<T>,
  tokens: readonly (readonly number[])[],
): Promise<Float32Array> {
  const op = "devicePrefill";
  const B = st.batch;
  const T = tokens[0]?.length ?? 0;
  if (tokens.length !== B || tokens.some((row) => row.length !== T) || T === 0)
    throw new Error(`${op}: expected ${B} rows of the same non-zero length`);
  if (st.position !== 0) throw new Error(`${op}: the state is at position ${st.position}, not 0`);
  if (T > st.capacity)
    throw new Error(`${op}: ${T} tokens exceed the decode capacity ${st.capacity}`);
  const cfg = dm.config;
  const logits = ops.noGrad(() => {
    let h = ops.embedding(
      ops.uploadInt(Int32Array.from(tokens.flat()), [B, T]),
      dm.weight("backbone.embeddings.weight"),
    );
    for (let r = 0; r < cfg.n_loops; r++) {
      for (let i = 0; i < cfg.n_layers; i++) {
        const lw = (name: string) => dm.weight(`backbone.layers.${i}.${name}`);
        const mw = (name: string) => lw(`mixer.${name}`);
        const state = st.states[r]![i]!;
        h = layerForward(ops, cfg, lw, h, (u) => {
          if (isAttentionLayer(cfg, i))
            return attentionPrefill(
              ops,
              attentionConfig(cfg),
              mw,
              u,
              state as KvCacheState<T>,
              B,
              T,
            );
          const m = state as Mamba2DecodeState<T>;
          const { y, ssm } = mambaPrefill(ops, mamba2Config(cfg), mw, u, m, B, T);
          ops.dispose(m.ssm);
          m.ssm = ssm;
          return y;
        });
      }
      h = dm.endOfStep(h);
    }
    const last = gatherRows(
      ops,
      ops.reshape(h, [B * T, cfg.d_model]),
      Array.from({ length: B }, (_v, b) => b * T + T - 1),
    );
    return dm.head(dm.readout(last));
  });
  const out = await ops.read(logits);
  st.position = T;
  return out;
}
