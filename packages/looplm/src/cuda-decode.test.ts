/**
 * Decoding on the CUDA backend, the state on the device (issue "Decoding on every device"): the
 * decoders written once in @loop/looped (`deviceDecodeToken`, `generateOn`) on the CUDA kernels
 * of the host emulator against the CPU's decoding, for each backbone: the logits token by token
 * at full depth, the exits and logits under early exit, and the tokens `generate` samples.
 * Skipped with one printed line without a C++ compiler (a failure under CI).
 */
import { cudaBackend } from "@loop/cuda";
import { startEmulatedDevice } from "@loop/cuda/node";
import {
  decodeStep,
  decodeStepEarlyExit,
  deviceDecodeToken,
  earlyExitSettings,
  generate,
  generateOn,
  initDecodeState,
  initDeviceDecodeState,
  LoopedModel,
  type ModelConfigInput,
  parseConfig,
  toDevice,
} from "@loop/looped";
import { emulatorSuiteRuns, relErr } from "@loop/test-support";
import { describe, expect, it } from "vitest";

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("decoding on the CUDA kernels of the host emulator", started);

const BASE = {
  vocab_size: 13,
  d_model: 16,
  n_layers: 2,
  n_loops: 3,
  exit_gate: true,
  ssm: { d_state: 4, headdim: 8, n_groups: 2, d_conv: 3, chunk_size: 4 },
  attention: { n_heads: 4, n_kv_heads: 2 },
};
const MODELS: Record<string, ModelConfigInput> = {
  mamba: { ...BASE, backbone: "mamba" },
  hybrid: { ...BASE, backbone: "hybrid", attn_layers: [1] },
  transformer: { ...BASE, backbone: "transformer", mlp: { d_ff: 24 }, loop_norm: true },
};
const TOL = 1e-4;

/** A model whose gate spreads the exits over the steps (the random init is too timid). */
function model(name: string): LoopedModel {
  const m = new LoopedModel(parseConfig(MODELS[name]!), { seed: 2 });
  const g = m.exitGate!;
  for (let d = 0; d < g.weight.size; d++) g.weight.data[d]! *= 6;
  g.bias.data[0] = -0.5;
  return m;
}

describe.runIf(runs)("decoding on the emulated CUDA kernels", () => {
  const ops = () => cudaBackend(started.ok ? started.device : (null as never)).ops;

  for (const name of Object.keys(MODELS)) {
    it(`${name}: full depth and early exit (gate q = 0.4, propagate) token by token`, async () => {
      const m = model(name);
      const o = ops();
      const B = 2;
      const ids = [
        [1, 5, 2, 9, 4, 0, 7],
        [3, 3, 8, 1, 12, 6, 2],
      ];
      for (const opts of [null, { q: 0.4, skipped: "propagate" as const }]) {
        const cpu = initDecodeState(m, B, 7);
        const dm = toDevice(m, o);
        const dev = initDeviceDecodeState(o, dm, B, 7);
        const settings = opts && earlyExitSettings(m, opts, B, "test");
        const seen = new Set<number>();
        for (let t = 0; t < 7; t++) {
          const tok = ids.map((s) => s[t]!);
          const want = opts
            ? decodeStepEarlyExit(m, cpu, tok, opts)
            : { logits: decodeStep(m, cpu, tok, false).logits[0]!, exitSteps: [3, 3] };
          const got = await deviceDecodeToken(o, dm, dev, tok, settings);
          expect(Array.from(got.exitSteps), `token ${t}`).toEqual(Array.from(want.exitSteps));
          expect(relErr(got.logits, want.logits.data), `token ${t}`).toBeLessThan(TOL);
          for (const z of got.exitSteps) seen.add(z);
        }
        // early exit really exits early somewhere (else it checks full depth twice)
        if (opts) expect(Math.min(...seen)).toBeLessThan(3);
        dm.dispose();
      }
    });

    it(`${name}: generateOn samples what generate samples`, async () => {
      const m = model(name);
      const prompt = [2, 7, 1];
      for (const policy of [{ kind: "full" as const }, { kind: "fixed" as const, step: 2 }]) {
        const opts = { maxNewTokens: 10, temperature: 0.8, seed: 3, policy };
        const want = generate(m, prompt, opts);
        const got: number[] = [];
        for await (const t of generateOn(ops(), m, prompt, opts)) got.push(t);
        expect(got).toEqual(want.tokens);
      }
    });
  }
});
