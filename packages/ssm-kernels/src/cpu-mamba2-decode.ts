/*
 * The CPU's Mamba-2 decode kernel as a `DecodeOps` slice (@loop/tensor): `mamba2Step` on CPU
 * tensors, the state rows advanced in place (mamba2-step.ts `mamba2StateStepRaw`, the loops of
 * the CPU's own decoding). Inference only: nothing is recorded.
 */
import type { DecodeOps, IntTensor } from "@loop/tensor";
import { Tensor } from "@loop/tensor";
import { mamba2StateStepRaw } from "./mamba2-step.js";

function expectShape(name: string, t: Tensor, shape: readonly number[]): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
    throw new Error(`mamba2Step: ${name} has shape [${t.shape}], expected [${shape}]`);
}

/** `DecodeOps.mamba2Step` on CPU tensors (see decode-ops.ts of @loop/tensor). */
export const cpuMamba2Decode: Pick<DecodeOps<Tensor, IntTensor>, "mamba2Step"> = {
  mamba2Step(sizes, zx, state, w, opts = {}) {
    const H = w.dtBias.size;
    const Di = H * sizes.headdim;
    const C = Di + 2 * sizes.nGroups * sizes.dState;
    const E = Di + C + H;
    if (zx.shape.length !== 2 || zx.shape[1] !== E)
      throw new Error(`mamba2Step: zx has shape [${zx.shape}], expected [B,${E}] (z | xBC | dt)`);
    const n = zx.shape[0]!;
    const S = state.ssm.shape[0]!;
    const rows = opts.rows?.data ?? null;
    if (rows) {
      if (rows.length !== n || new Set(rows).size !== n || rows.some((s) => s < 0 || s >= S))
        throw new Error(`mamba2Step: rows must be ${n} distinct state rows of 0..${S - 1}`);
    } else if (S !== n)
      throw new Error(`mamba2Step: the state holds ${S} rows, zx ${n} (pass rows to pick)`);
    expectShape("state.conv", state.conv, [S, C, sizes.dConv - 1]);
    expectShape("state.ssm", state.ssm, [S, H, sizes.headdim, sizes.dState]);
    const r = mamba2StateStepRaw(
      sizes,
      {
        convWeight: w.convWeight.data,
        convBias: w.convBias.data,
        dtBias: w.dtBias.data,
        aLog: w.aLog.data,
        d: w.d.data,
      },
      n,
      zx.data,
      rows,
      state.conv.data,
      state.ssm.data,
      opts.absorb ?? false,
    );
    return r && { y: new Tensor(r.y, [n, Di]), z: new Tensor(r.z, [n, Di]) };
  },
};
