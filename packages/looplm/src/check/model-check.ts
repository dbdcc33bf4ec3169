/*
 * The whole-model check of `looplm check`: each model case (`MODEL_CASES` of
 * `@loop/looped/internal`) through the backend's device model (`toDevice(model, ops)`:
 * @loop/looped's forward written once, run on the backend's ops) against the CPU model on the
 * oracle's kernels, from the same weights and tokens: the readouts and logits of every loop
 * step, and the gradient of the final loop's cross-entropy for every parameter (summed over the R
 * uses of the shared weights), compared relative to each gradient tensor's largest element as
 * docs/formats.md does. Tolerance: the op cases' (1e-4 relative, 5e-6 absolute) for the forward,
 * 2e-4 for the gradients (the WebGPU suite's).
 */
import { LoopedModel, parseConfig, toDevice } from "@loop/looped";
import { MODEL_CASE_VOCAB, MODEL_CASES, modelCaseData } from "@loop/looped/internal";
import { backward, crossEntropy, crossEntropyOn, IntTensor, type Tensor } from "@loop/tensor";
import { withKernels } from "@loop/tensor/kernel";
import type { ComputeBackend } from "../backend.js";
import type { AnyOps } from "./op-cases.js";
import {
  type CaseResult,
  ORACLE_KERNELS,
  timedCase,
  type Worst,
  worstOf,
  worstOfAll,
} from "./op-conformance.js";

const FORWARD_TOL = { atol: 5e-6, rtol: 1e-4 };
const GRAD_TOL = { atol: 1e-5, rtol: 2e-4 };

const byMax = (xs: Float32Array, scaleOf: Float32Array) => {
  let m = 0;
  for (const v of scaleOf) m = Math.max(m, Math.abs(v));
  return m > 0 ? xs.map((v) => v / m) : xs;
};

/** Model case `name` on `backend` against the CPU model on the oracle's kernels. */
export async function checkModelCase(
  backend: ComputeBackend,
  name: keyof typeof MODEL_CASES,
): Promise<CaseResult> {
  const base = { name: `model ${name}`, op: "device model", tol: FORWARD_TOL };
  const B = 2;
  const T = 7;
  return timedCase(base, async () => {
    const cpu = new LoopedModel(
      parseConfig({ vocab_size: MODEL_CASE_VOCAB, d_model: 16, ...MODEL_CASES[name] }),
      { seed: 5 },
    );
    const { tokens, targets, seqIdx } = modelCaseData(B, T, 7);
    const want = withKernels(ORACLE_KERNELS, () => {
      const out = cpu.forward(new IntTensor(tokens, [B, T]), { steps: "all", seqIdx });
      backward(crossEntropy(out.logits.at(-1)!, new IntTensor(targets, [B, T])));
      return out;
    });
    const ops = backend.ops as AnyOps;
    const dm = toDevice(cpu, ops);
    const all: Worst[] = [];
    try {
      const got = dm.forward(ops.uploadInt(tokens, [B, T]), {
        steps: "all",
        seqIdx: ops.uploadInt(seqIdx, [B * T]),
      });
      const outputs = [
        ["readouts", "readout"],
        ["logits", "logits"],
      ] as const;
      for (let i = 0; i < want.logits.length; i++) {
        for (const [key, label] of outputs) {
          const g = await ops.read(got[key][i]!);
          all.push(worstOf(`${label} ${i + 1}`, g, want[key][i]!.data, FORWARD_TOL));
        }
      }
      ops.backward(crossEntropyOn(ops, got.logits.at(-1)!, ops.uploadInt(targets, [B, T])), 1);
      const cpuParams = cpu.parameters();
      for (const [i, p] of dm.parameters().entries()) {
        const g = (cpuParams[i]!.tensor as Tensor).grad!;
        const a = (await ops.readGrad(p.tensor)) ?? new Float32Array(g.length);
        // (a gradient's bound relative to its largest element, as docs/formats.md compares)
        all.push(worstOf(`gradient of ${p.name}`, byMax(a, g), byMax(g, g), GRAD_TOL));
      }
    } finally {
      dm.dispose();
      ops.releaseTransients();
    }
    return worstOfAll(all);
  });
}
