/*
 * `looplm generate` on a device backend (any `ModelOps`), full depth: there is no recurrent
 * decode step on a device yet, so each new token recomputes the forward of the whole sequence so
 * far on the device (O(L²) work over L tokens) and reads back only the last position's logits.
 * Backends with host memory keep the recurrent decoding of @loop/looped's `generate` (O(L), and
 * every step policy: their `caps.decode`). The sampling is the CPU's (`sampleToken` with the same seeded stream), so the tokens
 * match `generate` on the CPU up to float32 ties.
 */
import { formatExitRule } from "@loop/exit-gate";
import {
  checkGenerateOptions,
  type GenerateOptions,
  type LoopedModel,
  sampleToken,
  toDevice,
} from "@loop/looped";
import { type ModelOps, Rng } from "@loop/tensor";

export async function generateOnDevice<T, I>(
  ops: ModelOps<T, I>,
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
  /** Called with every token as it is sampled (awaited before the next one). */
  onToken?: (id: number) => void | Promise<void>,
): Promise<number[]> {
  const { policy, temperature, topK } = checkGenerateOptions(model, prompt, opts);
  if (policy.kind !== "full") {
    const what =
      policy.kind === "rule"
        ? `exit rule ${formatExitRule(policy.rule)}`
        : `policy "${policy.kind}"`;
    throw new Error(
      `full-depth decoding runs every token through all loop steps; ${what} needs a backend whose decoding offers it (caps.decode.policies: the CPU backends')`,
    );
  }
  const V = model.config.vocab_size;
  const rng = new Rng(opts.seed ?? 0);
  const dm = toDevice(model, ops);
  const seq = [...prompt];
  const out: number[] = [];
  try {
    for (let i = 0; i < opts.maxNewTokens; i++) {
      const L = seq.length;
      const row = ops.noGrad(() => {
        const tokens = ops.uploadInt(Int32Array.from(seq), [1, L]);
        const logits = ops.reshape(dm.forward(tokens, { steps: "last" }).logits[0]!, [L, V]);
        // the last position's row only, gathered on the device (as an embedding lookup)
        return ops.embedding(ops.uploadInt(Int32Array.of(L - 1), [1]), logits);
      });
      const next = sampleToken(await ops.read(row), temperature, topK, rng);
      ops.releaseTransients();
      out.push(next);
      await onToken?.(next);
      if (next === opts.stopToken) break;
      seq.push(next);
    }
  } finally {
    ops.releaseTransients();
    dm.dispose();
  }
  return out;
}
