/**
 * ModelOptions.mixer: the mixer a factory builds is the one object every path of the CPU model
 * runs — the training forward included — and a device backend refuses it by name.
 */
import { Mamba2Mixer, type Mamba2State } from "@loop/ssm-kernels";
import {
  intTensor,
  type NamedParameter,
  noGrad,
  type SequenceMixer,
  type Tensor,
} from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { countParameters, flopsPerToken } from "./accounting.js";
import { configToJson, parseConfig } from "./config.js";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { decodeStep, initDecodeState } from "./decode.js";
import { toDevice } from "./device-model.js";
import { mamba2Config } from "./mixer-configs.js";
import type { MixerFactory } from "./mixer-factory.js";
import { LoopedModel } from "./model.js";

/** A Mamba-2 mixer behind another class, counting the calls of each path. */
class CountingMixer implements SequenceMixer<Mamba2State> {
  readonly positional = false;
  readonly calls = { forward: 0, step: 0, prefill: 0 };
  constructor(readonly inner: Mamba2Mixer) {}
  parameters(): NamedParameter[] {
    return this.inner.parameters();
  }
  forward(u: Tensor, seqIdx: Int32Array | null = null): Tensor {
    this.calls.forward++;
    return this.inner.forward(u, seqIdx);
  }
  initState(batch: number, capacity: number): Mamba2State {
    return this.inner.initState(batch, capacity);
  }
  step(state: Mamba2State, u: Tensor): Tensor {
    this.calls.step++;
    return this.inner.step(state, u);
  }
  prefill(state: Mamba2State, u: Tensor): Tensor {
    this.calls.prefill++;
    return this.inner.prefill(state, u);
  }
  absorb(state: Mamba2State, u: Tensor, rows: readonly number[]): void {
    this.inner.absorb(state, u, rows);
  }
  withRows<R>(state: Mamba2State, rows: readonly number[], fn: (sub: Mamba2State) => R): R {
    return this.inner.withRows(state, rows, fn);
  }
  endPosition(state: Mamba2State): void {
    this.inner.endPosition(state);
  }
}

const config = parseConfig({
  backbone: "mamba",
  vocab_size: 11,
  d_model: 16,
  n_layers: 2,
  n_loops: 2,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
});
// the built-in mixer's own construction, behind another class: the same initial weights
const counting: MixerFactory = ({ config, rng, nLayers }) =>
  new CountingMixer(new Mamba2Mixer(mamba2Config(config), { rng, nLayers }));
const ids = [3, 1, 4, 1, 5, 9];

describe("ModelOptions.mixer", () => {
  const plain = new LoopedModel(config, { seed: 4 });
  const model = new LoopedModel(config, { seed: 4, mixer: counting });
  const mixers = model.layers.map((l) => l.mixer as CountingMixer);
  const forward = (m: LoopedModel) =>
    noGrad(() => m.forward(intTensor(ids, [1, ids.length]), { steps: "all" })).logits;

  it("the training forward runs the factory's mixer objects (the same numbers as built in)", () => {
    const got = forward(model);
    expect(mixers.map((m) => m.calls.forward)).toEqual([2, 2]); // R = 2 loop steps each
    forward(plain).forEach((l, r) => {
      expect(got[r]!.data).toEqual(l.data);
    });
    expect(model.layers.map((l) => l.customMixer)).toEqual([true, true]);
    expect(plain.layers.map((l) => l.customMixer)).toEqual([false, false]);
  });

  it("decoding runs the same objects and reproduces the forward", () => {
    const full = forward(model)[1]!;
    const V = config.vocab_size;
    const st = initDecodeState(model, 1, ids.length);
    ids.forEach((id, t) => {
      const got = decodeStep(model, st, [id]).logits[1]!.data;
      const want = full.data.subarray(t * V, (t + 1) * V);
      got.forEach((v, j) => {
        expect(Math.abs(v - want[j]!)).toBeLessThan(1e-5);
      });
    });
    expect(mixers.map((m) => m.calls.step)).toEqual([2 * ids.length, 2 * ids.length]);
  });

  it("toDevice refuses it, naming the layer and the class", () => {
    expect(() => toDevice(model, cpuBackendOps)).toThrow(
      /toDevice: layer 0's mixer is a custom mixer \(CountingMixer, from ModelOptions\.mixer\)/,
    );
    expect(() => toDevice(plain, cpuBackendOps)).not.toThrow();
  });

  it("flopsPerToken(model) counts a custom mixer by its own flopsPerToken, or names it", () => {
    expect(() => flopsPerToken(model)).toThrow(
      "flopsPerToken: layer 0's mixer is a custom mixer (CountingMixer) that does not say its FLOPs: give it flopsPerToken(seqLen) (SequenceMixer)",
    );
    const builtIn = flopsPerToken(config, { seqLen: 32 });
    expect(flopsPerToken(plain, { seqLen: 32 })).toEqual(builtIn);
    class Counted extends CountingMixer {
      flopsPerToken(seqLen: number): number {
        return 1000 + seqLen;
      }
    }
    const counted = new LoopedModel(config, {
      seed: 4,
      mixer: ({ config, rng, nLayers }) =>
        new Counted(new Mamba2Mixer(mamba2Config(config), { rng, nLayers })),
    });
    const f = flopsPerToken(counted, { seqLen: 32 });
    expect(f.blockPerToken).toBe(2 * 1032);
    expect(f.forwardPerToken).toBe(2 * 2 * 1032 + builtIn.headPerToken);
  });

  it("config.json records the custom mixer, and a load without its factory names it", () => {
    expect(model.config.mixer).toBe("CountingMixer");
    expect(plain.config.mixer).toBeUndefined();
    const saved = parseConfig(JSON.parse(configToJson(model.config)));
    expect(saved.mixer).toBe("CountingMixer");
    expect(() => new LoopedModel(saved, { seed: 4 })).toThrow(
      'LoopedModel: config.mixer is "CountingMixer": its layers run that custom mixer; pass ModelOptions.mixer, the factory that builds it',
    );
    expect(() => new LoopedModel(saved, { seed: 4, mixer: () => null })).toThrow(
      'LoopedModel: config.mixer is "CountingMixer" but ModelOptions.mixer built no custom mixer',
    );
    expect(new LoopedModel(saved, { seed: 4, mixer: counting }).config.mixer).toBe("CountingMixer");
  });

  it("with a custom mixer the built-in mixers' sizes need not fit", () => {
    // (headdim 7 divides no d_inner here: a Mamba-2 layer of this config could not be built)
    const odd = { ...config, ssm: { ...config.ssm, headdim: 7 } };
    expect(() => parseConfig(odd)).toThrow(/ssm\.headdim \(7\) must divide/);
    const custom = parseConfig({ ...odd, mixer: "ShortConv" });
    class ShortConv extends CountingMixer {}
    const m = new LoopedModel(custom, {
      seed: 4,
      mixer: ({ config, rng, nLayers }) =>
        new ShortConv(
          new Mamba2Mixer(mamba2Config({ ...config, ssm: { ...config.ssm, headdim: 8 } }), {
            rng,
            nLayers,
          }),
        ),
    });
    expect(m.config.mixer).toBe("ShortConv");
    expect(countParameters(m)).toBeGreaterThan(0);
    expect(() => countParameters(custom)).toThrow(
      'countParameters: config.mixer is "ShortConv", a custom mixer whose parameters the config does not describe: count the model (countParameters(model))',
    );
    expect(() => flopsPerToken(custom)).toThrow(/^flopsPerToken: config\.mixer is "ShortConv"/);
    expect(() => parseConfig({ ...config, mixer: "" })).toThrow(
      'mixer must name the custom mixer (a non-empty string), got ""',
    );
  });

  it("a factory returning null keeps the config's mixer", () => {
    const m = new LoopedModel(config, { seed: 4, mixer: () => null });
    expect(m.layers.every((l) => l.mixer instanceof Mamba2Mixer && !l.customMixer)).toBe(true);
  });
});
