/**
 * Test support: one suite for a backend's decode kernels (`DecodeOps` of @loop/tensor), run on
 * every backend (decode-kernels*.test.ts): `mamba2Step` against the CPU's `mamba2StepRaw` (the
 * output, composed with the backend's projections and gated norm as the model composes it, and
 * both states over several tokens, with and without dt limits and norm groups; the state update
 * alone into picked rows), `attendStep` against the CPU's causal attention over the whole
 * sequence (`attentionRef` of q and k rotated by the CPU's `rope`, token by token; picked rows;
 * a token written without a query gives later queries the same numbers), and bad calls refused
 * with one line naming the problem.
 */
import { attentionRef, rope } from "@loop/attention";
import type { DecodeBackendOps } from "@loop/looped";
import { type Mamba2Config, mamba2Dims, mamba2StepRaw } from "@loop/ssm-kernels";
import { Rng, tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";

const TOL = { atol: 2e-5, rtol: 1e-4 };
const THETA = 500;

/** |got − want| ≤ atol + rtol·|want| everywhere, else the worst place named. */
function expectNear(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  expect(got.length, `${what}: length`).toBe(want.length);
  let worst = { ratio: 0, i: -1 };
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i]! - want[i]!) / (TOL.atol + TOL.rtol * Math.abs(want[i]!));
    if (!(r <= worst.ratio)) worst = { ratio: r, i };
  }
  expect(
    worst.ratio,
    `${what}: worst at ${worst.i}: ${got[worst.i]} vs ${want[worst.i]}`,
  ).toBeLessThanOrEqual(1);
}

const MAMBA: [string, Mamba2Config][] = [
  [
    "2 groups, no dt limit",
    {
      dModel: 16,
      dState: 8,
      headdim: 4,
      expand: 2,
      nGroups: 2,
      dConv: 4,
      chunkSize: 8,
      normEps: 1e-5,
    },
  ],
  [
    "dt limits, norm over all channels, a 2-tap conv",
    {
      dModel: 12,
      dState: 4,
      headdim: 6,
      expand: 2,
      nGroups: 1,
      dConv: 2,
      chunkSize: 8,
      normEps: 1e-5,
      dtLimit: [0.01, 0.2],
      normGroups: 1,
    },
  ],
];

function randomWeights(cfg: Mamba2Config, rng: Rng) {
  const { dInner: Di, nHeads: H, convDim: C, inProjDim: E } = mamba2Dims(cfg);
  const r = (n: number, s = 0.3) => rng.fillNormal(new Float32Array(n), 0, s);
  return {
    inProj: r(E * cfg.dModel),
    convWeight: r(C * cfg.dConv, 0.5),
    convBias: r(C, 0.1),
    dtBias: r(H, 0.5),
    aLog: rng.fillUniform(new Float32Array(H), -1, 1),
    d: r(H, 1),
    normWeight: rng.fillUniform(new Float32Array(Di), 0.5, 1.5),
    outProj: r(cfg.dModel * Di),
  };
}

/** Position t of x [B, T, H, hd] as [B, H, hd]. */
function at(x: Float32Array, B: number, T: number, H: number, hd: number, t: number): Float32Array {
  const out = new Float32Array(B * H * hd);
  for (let b = 0; b < B; b++)
    out.set(x.subarray((b * T + t) * H * hd, ((b * T + t) * H + H) * hd), b * H * hd);
  return out;
}

/** A sequence's random q, k, v and the CPU's causal attention of RoPE'd q, k over it. */
function sequence(B: number, T: number, Hq: number, Hkv: number, hd: number, seed: number) {
  const rng = new Rng(seed);
  const q = rng.fillNormal(new Float32Array(B * T * Hq * hd));
  const k = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
  const v = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
  const rq = rope(tensor(q, [B, T, Hq, hd]), { theta: THETA, offset: 0 });
  const rk = rope(tensor(k, [B, T, Hkv, hd]), { theta: THETA, offset: 0 });
  const want = attentionRef(rq, rk, tensor(v, [B, T, Hkv, hd])).data as Float32Array;
  return { q, k, v, rk: rk.data as Float32Array, want };
}

/** The decode-kernel suite on the backend `ops()` gives (skipped unless `runs`). */
export function decodeKernelSuite<T, I>(
  label: string,
  runs: boolean,
  ops: () => DecodeBackendOps<T, I>,
): void {
  describe.runIf(runs)(`${label}: the decode kernels against the CPU's decoding`, () => {
    const persistent = (o: DecodeBackendOps<T, I>, a: Float32Array, shape: number[]) =>
      o.upload(a, shape, { persistent: true });

    it.each(MAMBA)("mamba2Step, %s: output and states over 5 tokens", async (_n, cfg) => {
      const o = ops();
      const dims = mamba2Dims(cfg);
      const { dInner: Di, nHeads: H, convDim: C } = dims;
      const rng = new Rng(7);
      const w = randomWeights(cfg, rng);
      const B = 3;
      const conv = rng.fillNormal(new Float32Array(B * C * (cfg.dConv - 1)));
      const ssm = rng.fillNormal(new Float32Array(B * H * cfg.headdim * cfg.dState));
      const state = {
        conv: persistent(o, conv, [B, C, cfg.dConv - 1]),
        ssm: persistent(o, ssm, [B, H, cfg.headdim, cfg.dState]),
      };
      const dw = {
        convWeight: persistent(o, w.convWeight, [C, 1, cfg.dConv]),
        convBias: persistent(o, w.convBias, [C]),
        dtBias: persistent(o, w.dtBias, [H]),
        aLog: persistent(o, w.aLog, [H]),
        d: persistent(o, w.d, [H]),
      };
      const inProj = persistent(o, w.inProj, [dims.inProjDim, cfg.dModel]);
      const outProj = persistent(o, w.outProj, [cfg.dModel, Di]);
      const normW = persistent(o, w.normWeight, [Di]);
      for (let t = 0; t < 5; t++) {
        const u = rng.fillNormal(new Float32Array(B * cfg.dModel));
        const want = mamba2StepRaw(cfg, dims, w, B, u, conv, ssm);
        const got = o.noGrad(() => {
          const zx = o.linear(o.upload(u, [B, cfg.dModel]), inProj);
          const r = o.mamba2Step(cfg, zx, state, dw)!;
          const groups = cfg.normGroups ?? cfg.nGroups;
          return o.linear(o.gatedRmsnorm(r.y, r.z, normW, groups, cfg.normEps), outProj);
        });
        expectNear(await o.read(got), want, `token ${t}: output`);
        expectNear(await o.read(state.conv), conv, `token ${t}: conv state`);
        expectNear(await o.read(state.ssm), ssm, `token ${t}: ssm state`);
        o.releaseTransients();
      }
      for (const x of [state.conv, state.ssm, ...Object.values(dw), inProj, outProj, normW])
        o.dispose(x);
    });

    it("mamba2Step absorbs tokens into picked state rows only (early exit's skipped steps)", async () => {
      const cfg = MAMBA[0]![1];
      const o = ops();
      const dims = mamba2Dims(cfg);
      const { nHeads: H, convDim: C, inProjDim: E } = dims;
      const rng = new Rng(11);
      const w = randomWeights(cfg, rng);
      const S = 3;
      const convW = C * (cfg.dConv - 1);
      const ssmW = H * cfg.headdim * cfg.dState;
      const conv = rng.fillNormal(new Float32Array(S * convW));
      const ssm = rng.fillNormal(new Float32Array(S * ssmW));
      const state = {
        conv: persistent(o, conv, [S, C, cfg.dConv - 1]),
        ssm: persistent(o, ssm, [S, H, cfg.headdim, cfg.dState]),
      };
      const dw = {
        convWeight: persistent(o, w.convWeight, [C, cfg.dConv]),
        convBias: persistent(o, w.convBias, [C]),
        dtBias: persistent(o, w.dtBias, [H]),
        aLog: persistent(o, w.aLog, [H]),
        d: persistent(o, w.d, [H]),
      };
      const inProj = persistent(o, w.inProj, [E, cfg.dModel]);
      const picked = [2, 0];
      const rows = o.uploadInt(Int32Array.from(picked), [picked.length]);
      // the reference: the picked rows' states stepped on the CPU, the others untouched
      const pick = (a: Float32Array, width: number) => {
        const out = new Float32Array(picked.length * width);
        picked.forEach((s, j) => {
          out.set(a.subarray(s * width, (s + 1) * width), j * width);
        });
        return out;
      };
      const c2 = pick(conv, convW);
      const s2 = pick(ssm, ssmW);
      for (let t = 0; t < 3; t++) {
        const u = rng.fillNormal(new Float32Array(picked.length * cfg.dModel));
        mamba2StepRaw(cfg, dims, w, picked.length, u, c2, s2);
        const zx = o.noGrad(() => o.linear(o.upload(u, [picked.length, cfg.dModel]), inProj));
        expect(o.mamba2Step(cfg, zx, state, dw, { rows, absorb: true })).toBeNull();
      }
      const wantConv = conv.slice();
      const wantSsm = ssm.slice();
      picked.forEach((s, j) => {
        wantConv.set(c2.subarray(j * convW, (j + 1) * convW), s * convW);
        wantSsm.set(s2.subarray(j * ssmW, (j + 1) * ssmW), s * ssmW);
      });
      expectNear(await o.read(state.conv), wantConv, "conv state");
      const gotSsm = await o.read(state.ssm);
      expectNear(gotSsm, wantSsm, "ssm state");
      // row 1 was not picked: exactly its values
      expect(Array.from(gotSsm.subarray(ssmW, 2 * ssmW))).toEqual(
        Array.from(ssm.subarray(ssmW, 2 * ssmW)),
      );
      o.releaseTransients();
    });

    it.each([
      ["GQA 4 query heads over 2 KV heads, hd 8", 2, 9, 4, 2, 8],
      ["one head, hd 70 over 70 positions", 1, 70, 1, 1, 70],
    ] as const)(
      "attendStep, %s: token by token equals causal attention",
      async (_n, B, T, Hq, Hkv, hd) => {
        const o = ops();
        const { q, k, v, rk, want } = sequence(B, T, Hq, Hkv, hd, 3);
        const cap = T + 3;
        const zeros = new Float32Array(B * Hkv * cap * hd);
        const cache = {
          k: persistent(o, zeros, [B, Hkv, cap, hd]),
          v: persistent(o, zeros, [B, Hkv, cap, hd]),
        };
        for (let t = 0; t < T; t++) {
          const out = o.attendStep(
            cache,
            o.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]),
            o.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
            o.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
            t,
            { theta: THETA },
          );
          expectNear(await o.read(out!), at(want, B, T, Hq, hd, t), `position ${t}`);
          o.releaseTransients();
        }
        // the cache holds the rotated keys at their positions
        const kc = await o.read(cache.k);
        const last = T - 1;
        for (let b = 0; b < B; b++)
          for (let h = 0; h < Hkv; h++) {
            const c = ((b * Hkv + h) * cap + last) * hd;
            const w = ((b * T + last) * Hkv + h) * hd;
            expectNear(kc.subarray(c, c + hd), rk.subarray(w, w + hd), "cached key");
          }
        o.dispose(cache.k);
        o.dispose(cache.v);
      },
    );

    it("attendStep steps picked cache rows only, and writes without a query", async () => {
      const o = ops();
      const [S, T, Hq, Hkv, hd] = [3, 6, 4, 2, 6];
      const picked = [2, 0];
      const B = picked.length;
      const { q, k, v, want } = sequence(B, T, Hq, Hkv, hd, 9);
      const zeros = new Float32Array(S * Hkv * T * hd);
      const cache = {
        k: persistent(o, zeros, [S, Hkv, T, hd]),
        v: persistent(o, zeros, [S, Hkv, T, hd]),
      };
      const rows = o.uploadInt(Int32Array.from(picked), [B]);
      for (let t = 0; t < T; t++) {
        // every other token writes its entry alone (an exited token's), the rest attend
        const withQ = t % 2 === 1;
        const out = o.attendStep(
          cache,
          withQ ? o.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]) : null,
          o.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
          o.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
          t,
          { rows, theta: THETA },
        );
        if (withQ) expectNear(await o.read(out!), at(want, B, T, Hq, hd, t), `position ${t}`);
        else expect(out).toBeNull();
      }
      // input row j's values went to cache row picked[j]; row 1 was never touched
      const vc = await o.read(cache.v);
      const rowWidth = Hkv * T * hd;
      picked.forEach((s, j) => {
        for (let h = 0; h < Hkv; h++)
          for (let t = 0; t < T; t++) {
            const c = s * rowWidth + (h * T + t) * hd;
            const w = ((j * T + t) * Hkv + h) * hd;
            expect(Array.from(vc.subarray(c, c + hd))).toEqual(Array.from(v.subarray(w, w + hd)));
          }
      });
      expect(vc.subarray(rowWidth, 2 * rowWidth).every((x) => x === 0)).toBe(true);
      o.releaseTransients();
    });

    it("refuses rows that repeat, a missing rows, and positions outside the cache", () => {
      const o = ops();
      const cfg = MAMBA[0]![1];
      const { nHeads: H, convDim: C, inProjDim: E } = mamba2Dims(cfg);
      const z = (shape: number[]) =>
        o.upload(new Float32Array(shape.reduce((a, b) => a * b)), shape);
      const rows = (ids: number[]) => o.uploadInt(Int32Array.from(ids), [ids.length]);
      const state = { conv: z([3, C, cfg.dConv - 1]), ssm: z([3, H, cfg.headdim, cfg.dState]) };
      const w = {
        convWeight: z([C, cfg.dConv]),
        convBias: z([C]),
        dtBias: z([H]),
        aLog: z([H]),
        d: z([H]),
      };
      expect(() => o.mamba2Step(cfg, z([2, E]), state, w, { rows: rows([1, 1]) })).toThrow(
        "rows must be 2 distinct state rows of 0..2",
      );
      expect(() => o.mamba2Step(cfg, z([2, E]), state, w)).toThrow(
        "the state holds 3 rows, zx 2 (pass rows to pick)",
      );
      const cache = { k: z([3, 2, 4, 8]), v: z([3, 2, 4, 8]) };
      const step = (pos: number, r: I | null) => () =>
        o.attendStep(cache, z([2, 4, 8]), z([2, 2, 8]), z([2, 2, 8]), pos, {
          theta: THETA,
          rows: r,
        });
      expect(step(4, rows([0, 2]))).toThrow("position 4 is outside the cache's capacity 4");
      expect(step(0, rows([1, 1]))).toThrow("rows must be 2 distinct state rows of 0..2");
      expect(step(0, null)).toThrow("the state holds 3 rows, the input 2 (pass rows to pick)");
      o.releaseTransients();
    });
  });
}
