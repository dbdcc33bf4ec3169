/**
 * examples/custom-mixer.ts against the workspace sources (the examples runner runs it from the
 * packed tarballs): its program trains and decodes consistently, and its mixer, through
 * `ModelOptions.mixer`, is the one every path runs — the training forward, decoding, prefill,
 * early-exit decoding and prefill, state dicts and checkpoint folders — while a device backend
 * refuses it by name.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cpuBackendOps,
  decodeStep,
  decodeStepEarlyExit,
  generate,
  initDecodeState,
  LoopedModel,
  loadStateDict,
  type MixerFactory,
  parseConfig,
  prefill,
  prefillEarlyExit,
  stateDict,
  toDevice,
} from "@loop/looped";
import { loadCheckpoint, saveCheckpoint } from "@loop/looped/node";
import { Mamba2Mixer } from "@loop/ssm-kernels";
import { intTensor, noGrad, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { main, ShortConvMixer } from "../../examples/custom-mixer.js";

const config = parseConfig({
  backbone: "mamba",
  vocab_size: 11,
  d_model: 16,
  n_layers: 2,
  n_loops: 3,
  exit_gate: true,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
});
const everyLayer: MixerFactory = ({ config, rng }) => new ShortConvMixer(config.d_model, 3, rng);
// layer 0 keeps the config's Mamba-2 mixer, layer 1 is custom
const secondLayer: MixerFactory = (ctx) => (ctx.index === 1 ? everyLayer(ctx) : null);
const ids = [
  [1, 4, 2, 9, 0, 3, 3, 7],
  [10, 5, 6, 2, 8, 1, 1, 4],
];
const [B, T, V] = [ids.length, ids[0]!.length, config.vocab_size];

/** logits(r) [B,T,V] of the full forward, r = 1..R. */
function forwardLogits(model: LoopedModel): Tensor[] {
  return noGrad(() => model.forward(intTensor(ids.flat(), [B, T]), { steps: "all" })).logits;
}

/** Row b, position t of logits [B,T,V]. */
const at = (l: Tensor, b: number, t: number) =>
  Array.from(l.data.subarray((b * T + t) * V, (b * T + t + 1) * V));

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe("examples/custom-mixer.ts", () => {
  it("trains with Trainer (the loss falls) and decodes what the forward computes", () => {
    const { losses, maxDecodeDiff } = main(30);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(losses.slice(-5))).toBeLessThan(mean(losses.slice(0, 5)));
    expect(maxDecodeDiff).toBeLessThan(1e-5);
  });

  for (const [name, factory] of [
    ["every layer", everyLayer],
    ["one layer of two", secondLayer],
  ] as const) {
    describe(`a custom mixer in ${name}`, () => {
      const model = new LoopedModel(config, { seed: 2, mixer: factory });
      const full = forwardLogits(model);

      it("is the layer's mixer, its parameters named under the layer", () => {
        expect(model.layers[1]!.mixer).toBeInstanceOf(ShortConvMixer);
        expect(model.layers[1]!.customMixer).toBe(true);
        expect(model.layers[0]!.mixer instanceof Mamba2Mixer).toBe(factory === secondLayer);
        expect(model.parameters().map((p) => p.name)).toContain(
          "backbone.layers.1.mixer.conv.weight",
        );
      });

      it("decodeStep reproduces every loop step's logits of the forward", () => {
        const st = initDecodeState(model, B, T);
        let worst = 0;
        for (let t = 0; t < T; t++) {
          const { logits } = decodeStep(model, st, [ids[0]![t]!, ids[1]![t]!]);
          logits.forEach((l, r) => {
            for (let b = 0; b < B; b++)
              worst = Math.max(
                worst,
                maxDiff(l.data.subarray(b * V, (b + 1) * V), at(full[r]!, b, t)),
              );
          });
        }
        expect(worst).toBeLessThan(1e-5);
      });

      it("prefill of a first part, then decodeStep, reproduces the forward", () => {
        const st = initDecodeState(model, B, T);
        const cut = 5;
        const p = prefill(
          model,
          st,
          ids.map((s) => s.slice(0, cut)),
        );
        for (let b = 0; b < B; b++)
          expect(
            maxDiff(p.logits[2]!.data.subarray(b * V, (b + 1) * V), at(full[2]!, b, cut - 1)),
          ).toBeLessThan(1e-5);
        const { logits } = decodeStep(model, st, [ids[0]![cut]!, ids[1]![cut]!]);
        for (let b = 0; b < B; b++)
          expect(
            maxDiff(logits[2]!.data.subarray(b * V, (b + 1) * V), at(full[2]!, b, cut)),
          ).toBeLessThan(1e-5);
      });

      it("early-exit decoding and prefill run it too: exit at step 1 is logits(1), skipped steps absorb", () => {
        const st = initDecodeState(model, B, T);
        for (let t = 0; t < T; t++) {
          const r = decodeStepEarlyExit(model, st, [ids[0]![t]!, ids[1]![t]!], {
            maxStep: 1,
            skipped: "propagate",
          });
          for (let b = 0; b < B; b++)
            expect(
              maxDiff(r.logits.data.subarray(b * V, (b + 1) * V), at(full[0]!, b, t)),
            ).toBeLessThan(1e-5);
        }
        const whole = prefillEarlyExit(model, initDecodeState(model, B, T), ids, { q: 1 });
        for (let b = 0; b < B; b++)
          expect(
            maxDiff(whole.logits.data.subarray(b * V, (b + 1) * V), at(full[2]!, b, T - 1)),
          ).toBeLessThan(1e-5);
      });

      it("generate (prefill, then token by token) picks the forward's greedy tokens", () => {
        const prompt = ids[0]!.slice(0, 4);
        const { tokens } = generate(model, prompt, { maxNewTokens: 4, temperature: 0 });
        const seq = [...prompt, ...tokens];
        const logits = noGrad(() =>
          model.forward(intTensor(seq, [1, seq.length]), { steps: "last" }),
        ).logits[0]!;
        tokens.forEach((tok, k) => {
          const t = prompt.length - 1 + k;
          const row = Array.from(logits.data.subarray(t * V, (t + 1) * V));
          expect(tok, `token ${k}`).toBe(row.indexOf(Math.max(...row)));
        });
      });

      it("a state dict carries its weights into a model built with the same factory", () => {
        const copy = new LoopedModel(config, { seed: 9, mixer: factory });
        loadStateDict(copy, stateDict(model));
        expect(forwardLogits(copy)[2]!.data).toEqual(full[2]!.data);
        expect(() => loadStateDict(new LoopedModel(config), stateDict(model))).toThrow(
          /missing: .*backbone\.layers\.1\.mixer\.dt_bias.*unexpected: .*backbone\.layers\.1\.mixer\.conv\.weight.*; its mixer weights are not the config's: a model saved with custom mixers \(ModelOptions\.mixer\) loads only with the same mixer factory/,
        );
      });

      it("a checkpoint folder loads back with the same factory", () => {
        const dir = join(mkdtempSync(join(tmpdir(), "custom-mixer-")), "ckpt");
        saveCheckpoint(dir, model);
        expect(forwardLogits(loadCheckpoint(dir, { mixer: factory }))[2]!.data).toEqual(
          full[2]!.data,
        );
        expect(() => loadCheckpoint(dir)).toThrow(
          /config\.mixer is "\w+": its layers run that custom mixer; pass ModelOptions\.mixer/,
        );
      });

      it("a device backend refuses it by name", () => {
        const i = factory === secondLayer ? 1 : 0;
        expect(() => toDevice(model, cpuBackendOps)).toThrow(
          new RegExp(`layer ${i}'s mixer is a custom mixer \\(ShortConvMixer`),
        );
      });
    });
  }
});
