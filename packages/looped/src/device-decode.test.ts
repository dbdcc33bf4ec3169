/**
 * Device decoding written once (device-decode.ts, device-generate.ts) against the CPU's own
 * decoders, run on the CPU backend's ops with their decode kernels (`cpuBackendOps`): the same
 * logits token by token at full depth, the same exits and logits under early exit (fixed depth,
 * the gate's threshold, rules that read logits or readouts, "carry" and "propagate", rows
 * exiting at different steps), and `generateOn` samples what `generate` samples. Every backend
 * with the two decode kernels runs this code; the CUDA and WebGPU suites check their kernels.
 */
import type { ExitRule } from "@loop/exit-gate";
import { describe, expect, it } from "vitest";
import { cpuBackendOps } from "./cpu-backend-ops.js";
import { decodeStep, initDecodeState } from "./decode.js";
import {
  decodeStepEarlyExit,
  type EarlyExitOptions,
  earlyExitSettings,
} from "./decode-early-exit.js";
import { deviceDecodeToken, initDeviceDecodeState } from "./device-decode.js";
import { generateOn } from "./device-generate.js";
import { toDevice } from "./device-model.js";
import { devicePrefill, stateTensors } from "./device-prefill.js";
import { generate, type StepPolicy } from "./generate.js";
import { configs, gatedModel, R, relErr, TOL, tokens } from "./helpers.test-util.js";

const ops = cpuBackendOps;

describe("device decoding on the CPU backend's decode kernels", () => {
  for (const [name, cfg] of Object.entries(configs))
    it(`${name}: full depth, token by token, the logits of decodeStep`, async () => {
      const model = gatedModel(cfg, 3);
      const B = 2;
      const seqs = tokens(B, 7);
      const cpu = initDecodeState(model, B, 7);
      const dm = toDevice(model, ops);
      const dev = initDeviceDecodeState(ops, dm, B, 7);
      for (let t = 0; t < 7; t++) {
        const ids = seqs.map((s) => s[t]!);
        const want = decodeStep(model, cpu, ids, false).logits[0]!.data;
        const got = await deviceDecodeToken(ops, dm, dev, ids, null);
        expect(relErr(got.logits, want), `token ${t}`).toBeLessThan(TOL);
        expect(Array.from(got.exitSteps)).toEqual([R, R]);
      }
      expect(dev.position).toBe(7);
    });

  const policies: [string, EarlyExitOptions][] = [
    ["a fixed depth of 2", { maxStep: 2 }],
    ["the gate at q = 0.4", { q: 0.4 }],
    ["the gate at q = 0.4, skipped steps propagate", { q: 0.4, skipped: "propagate" }],
    ["entropy:1.5 (reads the logits)", { rule: { kind: "entropy", tau: 1.5 } as ExitRule }],
    [
      "state-change:0.5 (reads the readout)",
      { rule: { kind: "state-change", eps: 0.5 } as ExitRule },
    ],
  ];
  for (const [name, cfg] of Object.entries(configs))
    it.each(policies)(
      `${name}: early exit under %s, the CPU's exits and logits`,
      async (_p, opts) => {
        const model = gatedModel(cfg, 5);
        const B = 3;
        const seqs = tokens(B, 6, 1);
        const cpu = initDecodeState(model, B, 6);
        const dm = toDevice(model, ops);
        const dev = initDeviceDecodeState(ops, dm, B, 6);
        const settings = earlyExitSettings(model, opts, B, "test");
        const steps = new Set<number>();
        for (let t = 0; t < 6; t++) {
          const ids = seqs.map((s) => s[t]!);
          const want = decodeStepEarlyExit(model, cpu, ids, opts);
          const got = await deviceDecodeToken(ops, dm, dev, ids, settings);
          expect(Array.from(got.exitSteps), `token ${t}`).toEqual(Array.from(want.exitSteps));
          expect(relErr(got.logits, want.logits.data), `token ${t}`).toBeLessThan(TOL);
          for (const z of want.exitSteps) steps.add(z);
        }
        if (opts.maxStep) expect([...steps]).toEqual([opts.maxStep]);
      },
    );

  it("rows exiting at different steps in one token (the kernels' picked rows) keep the CPU's numbers", async () => {
    const model = gatedModel(configs.hybrid, 5);
    const B = 3;
    const seqs = tokens(B, 6, 1);
    const cpu = initDecodeState(model, B, 6);
    const settings = earlyExitSettings(model, { q: 0.4 }, B, "test");
    let mixed = false;
    const dm = toDevice(model, ops);
    const dev = initDeviceDecodeState(ops, dm, B, 6);
    for (let t = 0; t < 6; t++) {
      const ids = seqs.map((s) => s[t]!);
      const want = decodeStepEarlyExit(model, cpu, ids, { q: 0.4 });
      const got = await deviceDecodeToken(ops, dm, dev, ids, settings);
      expect(Array.from(got.exitSteps), `token ${t}`).toEqual(Array.from(want.exitSteps));
      expect(relErr(got.logits, want.logits.data), `token ${t}`).toBeLessThan(TOL);
      if (new Set(want.exitSteps).size > 1) mixed = true;
    }
    expect(mixed).toBe(true);
  });

  for (const [name, cfg] of Object.entries(configs))
    it(`${name}: the chunked prefill leaves token-by-token decoding's states and logits`, async () => {
      const model = gatedModel(cfg, 4);
      const B = 2;
      const seqs = tokens(B, 7, 2);
      const dm = toDevice(model, ops);
      const byToken = initDeviceDecodeState(ops, dm, B, 9);
      let want: Float32Array = new Float32Array(0);
      for (let t = 0; t < 7; t++)
        want = (
          await deviceDecodeToken(
            ops,
            dm,
            byToken,
            seqs.map((s) => s[t]!),
            null,
          )
        ).logits;
      const chunked = initDeviceDecodeState(ops, dm, B, 9);
      const got = await devicePrefill(ops, dm, chunked, seqs);
      expect(relErr(got, want)).toBeLessThan(TOL);
      expect(chunked.position).toBe(7);
      const a = stateTensors(chunked);
      const b = stateTensors(byToken);
      a.forEach((x, k) => {
        expect(relErr(x.data, b[k]!.data), `state tensor ${k}`).toBeLessThan(TOL);
      });
      // and the next token decodes alike from either
      const next = seqs.map((s) => s[0]!);
      const n1 = await deviceDecodeToken(ops, dm, chunked, next, null);
      const n2 = await deviceDecodeToken(ops, dm, byToken, next, null);
      expect(relErr(n1.logits, n2.logits)).toBeLessThan(TOL);
    });

  const genPolicies: [string, StepPolicy][] = [
    ["full", { kind: "full" }],
    ["fixed:2", { kind: "fixed", step: 2 }],
    ["gate:0.4", { kind: "rule", rule: { kind: "gate", q: 0.4 } as ExitRule }],
    ["threshold 0.4, full prompt", { kind: "threshold", q: 0.4, fullPrompt: true }],
  ];
  for (const [name, cfg] of Object.entries(configs))
    it.each(genPolicies)(
      `${name}: generateOn samples what generate samples (%s)`,
      async (_p, policy) => {
        const model = gatedModel(cfg, 9);
        const prompt = [1, 4, 2, 7];
        for (const temperature of [0, 1]) {
          const opts = { maxNewTokens: 12, temperature, seed: 4, policy };
          const want = generate(model, prompt, opts);
          const it = generateOn(ops, model, prompt, opts);
          const got: number[] = [];
          let r = await it.next();
          for (; !r.done; r = await it.next()) got.push(r.value);
          expect(got).toEqual(want.tokens);
          expect(r.value.exitSteps).toEqual(want.exitSteps);
          expect(r.value.counts).toEqual(want.counts);
        }
      },
    );
});
