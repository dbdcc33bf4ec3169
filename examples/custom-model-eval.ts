// Evaluate a model of your own with @loop/eval. The evaluators take anything that hands them
// each batch's logits at every "loop step" (a `StepOutputSource`), so a model written in plain
// TypeScript, in another framework or behind a server gets the same per-step accuracy as a
// LoopedModel. This one is p-hop's algorithm written out: its step r follows r hops, so its
// accuracy should be exact once r reaches the task's hop count. Run: npx tsx custom-model-eval.ts
//
// Packages: @loop/eval, @loop/tasks, @loop/tensor.
import { evaluateAccuracy, type StepOutputSource } from "@loop/eval";
import { type Batch, pHop } from "@loop/tasks";
import { tensor } from "@loop/tensor";

const task = pHop({ alphabet: 4, length: 16, hops: 3, dense: true });
const STEPS = 4;

const hopFollower: StepOutputSource = {
  config: { n_loops: STEPS, vocab_size: task.vocabSize },
  hasGate: false,
  outputs(batch: Batch) {
    const [B, T] = batch.shape;
    const V = task.vocabSize;
    const logits = Array.from({ length: STEPS }, () => new Float32Array(B * T * V));
    for (let b = 0; b < B; b++) {
      const row = batch.tokens.subarray(b * T, (b + 1) * T);
      for (let t = 0; t < T; t++) {
        // One hop (docs/tasks.md, positions 1-based): from position i to just after the most
        // recent earlier occurrence of v_i; 0 when there is none.
        let pos = t + 1;
        for (let r = 0; r < STEPS && pos > 0; r++) {
          const v = row[pos - 1]!;
          let j = pos - 1;
          while (j >= 1 && row[j - 1] !== v) j--;
          pos = j >= 1 ? j + 1 : 0;
          // Step r predicts v at the position r + 1 hops lead to (a one-hot logit).
          if (pos > 0) logits[r]![(b * T + t) * V + row[pos - 1]!] = 1;
        }
      }
    }
    return { logits: logits.map((l) => tensor(l, [B, T, V])), pdf: null };
  },
};

const { steps } = await evaluateAccuracy(hopFollower, task.evalSet({ count: 256, batchSize: 64 }));
for (const s of steps)
  console.log(
    `step ${s.step} (${s.step} hop${s.step > 1 ? "s" : ""}): ${(100 * s.accuracy).toFixed(1)} % of ${s.total}`,
  );
