/**
 * The CUDA backend's attention decode over a device KV cache (kernels/decode.cu `kv_append`,
 * `attn_decode`; `appendAndAttendOn`, `ropeAt`) on the host emulator: token by token, each
 * output equals that position's row of the CPU's causal GQA attention over the whole sequence
 * (`attentionRef`), and RoPE at a position equals the CPU's `rope` with that offset; picked
 * cache rows leave the others as they were. Skipped with one printed line without a C++
 * compiler (a failure under CI).
 */
import { attentionRef, rope } from "@loop/attention";
import { appendAndAttendOn, cudaBackend, kvCacheOn, ropeAt } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import { Rng, tensor } from "@loop/tensor";
import { suiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";

const started = await startEmulatedDevice();
const runs = suiteRuns(
  "the CUDA attention decode on the host emulator",
  started.ok ? null : started.reason,
  "installs g++",
);

function expectClose(got: Float32Array, want: ArrayLike<number>, what: string): void {
  expect(got.length, what).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < want.length; i++)
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (1e-5 + 1e-4 * Math.abs(want[i]!)));
  expect(worst, `${what}: worst error over tolerance`).toBeLessThanOrEqual(1);
}

/** Position t of x [B, T, H, hd] as [B, H, hd]. */
function at(x: Float32Array, B: number, T: number, H: number, hd: number, t: number): Float32Array {
  const out = new Float32Array(B * H * hd);
  for (let b = 0; b < B; b++)
    out.set(x.subarray((b * T + t) * H * hd, ((b * T + t) * H + H) * hd), b * H * hd);
  return out;
}

describe.runIf(runs)("the CUDA attention decode against the CPU's attention", () => {
  const backend = () => cudaBackend(started.ok ? started.device : (null as never));

  it.each([
    ["GQA 4 query heads over 2 KV heads, hd 8", 2, 9, 4, 2, 8],
    ["one head, hd 34 (more than a warp's lanes)", 1, 6, 1, 1, 34],
  ] as const)("%s: token by token equals causal attention", async (_n, B, T, Hq, Hkv, hd) => {
    const { ops, ctx } = backend();
    const rng = new Rng(3);
    const q = rng.fillNormal(new Float32Array(B * T * Hq * hd));
    const k = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
    const v = rng.fillNormal(new Float32Array(B * T * Hkv * hd));
    const want = attentionRef(
      tensor(q, [B, T, Hq, hd]),
      tensor(k, [B, T, Hkv, hd]),
      tensor(v, [B, T, Hkv, hd]),
    ).data;
    const cap = T + 3;
    const cache = kvCacheOn(ctx, B, Hkv, cap, hd);
    for (let t = 0; t < T; t++) {
      const out = appendAndAttendOn(
        ctx,
        cache,
        ops.upload(at(q, B, T, Hq, hd, t), [B, Hq, hd]),
        ops.upload(at(k, B, T, Hkv, hd, t), [B, Hkv, hd]),
        ops.upload(at(v, B, T, Hkv, hd, t), [B, Hkv, hd]),
        t,
      );
      expectClose(await ops.read(out), at(want as Float32Array, B, T, Hq, hd, t), `position ${t}`);
    }
  });

  it("writes only the picked cache rows", async () => {
    const { ops, ctx } = backend();
    const [S, Hkv, cap, hd] = [3, 1, 4, 4];
    const cache = kvCacheOn(ctx, S, Hkv, cap, hd);
    const k = Float32Array.from({ length: hd }, (_v, i) => i + 1);
    const rows = ops.uploadInt(Int32Array.of(2), [1]);
    const out = appendAndAttendOn(
      ctx,
      cache,
      ops.upload(k, [1, 1, hd]),
      ops.upload(k, [1, Hkv, hd]),
      ops.upload(k, [1, Hkv, hd]),
      0,
      rows,
    );
    // one position: the softmax is 1 and the output is that position's value
    expectClose(await ops.read(out), k, "output");
    const kc = await ops.read(cache.k);
    const row = (s: number) => kc.subarray(s * Hkv * cap * hd, s * Hkv * cap * hd + hd);
    expectClose(row(2), k, "row 2, position 0");
    expect(Array.from(row(0))).toEqual([0, 0, 0, 0]);
    expect(Array.from(row(1))).toEqual([0, 0, 0, 0]);
  });

  it("RoPE at a position equals the CPU's rope at that offset", async () => {
    const { ops, ctx } = backend();
    const [B, H, hd] = [2, 3, 8];
    const x = new Rng(5).fillNormal(new Float32Array(B * H * hd));
    for (const pos of [0, 5, 11]) {
      const want = rope(tensor(x, [B, 1, H, hd]), { theta: 500, offset: pos }).data;
      const got = await ops.read(ropeAt(ctx, ops.upload(x, [B, H, hd]), 500, pos, 12));
      expectClose(got, want, `position ${pos}`);
    }
    expect(() => ropeAt(ctx, ops.upload(x, [B, H, hd]), 500, 12, 12)).toThrow(
      "cuda ropeAt: position 12 is outside the capacity 12",
    );
  });
});
