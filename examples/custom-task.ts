// A task of your own: implement the `Task` interface of @loop/tasks and the library's Trainer
// and evaluators take it like Mano or p-hop. This one is a running sum: read digits 0–4 and,
// at every position, answer the sum so far mod 5 (the answer at position t depends on the
// whole prefix, a state the recurrent mixer must carry). Run: npx tsx custom-task.ts
//
// Packages: @loop/eval, @loop/looped, @loop/tasks, @loop/tensor, @loop/train.
import { evaluateAccuracy } from "@loop/eval";
import { LoopedModel, parseConfig } from "@loop/looped";
import {
  type Batch,
  type EvalSetOptions,
  type Task,
  type TaskCursor,
  Vocabulary,
} from "@loop/tasks";
import { deriveSeed, Rng } from "@loop/tensor";
import { resolveTrainOptions, Trainer } from "@loop/train";

const MOD = 5;

class RunningSumTask implements Task {
  readonly name = "running-sum";
  readonly metric = "accuracy" as const; // exact match at the scored positions
  readonly tokenizer = null; // a symbolic task: no text
  readonly vocab = new Vocabulary(Array.from({ length: MOD }, (_, d) => String(d)));
  readonly vocabSize = MOD;
  readonly padId = null; // every row has the same length
  constructor(readonly seqLen: number) {}

  /** Row `index` of the stream `seed`: a pure function of both, so a cursor resumes exactly. */
  private row(seed: number, index: number, tokens: Int32Array, targets: Int32Array, at: number) {
    const rng = new Rng(deriveSeed(seed, "running-sum", index));
    let sum = 0;
    for (let t = 0; t < this.seqLen; t++) {
      const digit = rng.int(MOD);
      sum = (sum + digit) % MOD;
      tokens[at + t] = digit;
      targets[at + t] = sum;
    }
  }

  private batch(seed: number, first: number, rows: number): Batch {
    const tokens = new Int32Array(rows * this.seqLen);
    const targets = new Int32Array(rows * this.seqLen);
    for (let i = 0; i < rows; i++) this.row(seed, first + i, tokens, targets, i * this.seqLen);
    return { tokens, targets, shape: [rows, this.seqLen] };
  }

  startCursor(seed: number): TaskCursor {
    return { seed, position: 0 };
  }

  trainBatch(cursor: TaskCursor, batchSize: number) {
    const batch = this.batch(cursor.seed, cursor.position, batchSize);
    return { batch, cursor: { seed: cursor.seed, position: cursor.position + batchSize } };
  }

  evalSet({ count, batchSize, seed = 12345 }: EvalSetOptions): Batch[] {
    const batches: Batch[] = [];
    for (let first = 0; first < count; first += batchSize)
      batches.push(this.batch(seed, first, Math.min(batchSize, count - first)));
    return batches;
  }

  score(batch: Batch, predicted: Int32Array) {
    let correct = 0;
    for (let i = 0; i < predicted.length; i++) if (predicted[i] === batch.targets[i]) correct++;
    const total = predicted.length;
    return { correct, total, accuracy: total > 0 ? correct / total : 0 };
  }
}

const task = new RunningSumTask(12);
const model = new LoopedModel(
  parseConfig({
    backbone: "mamba",
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
  }),
  { seed: 4 },
);
const evalSet = task.evalSet({ count: 128, batchSize: 64 });
const before = await evaluateAccuracy(model, evalSet);
const trainer = new Trainer(
  model,
  task,
  resolveTrainOptions({ steps: 80, batchSize: 16, lr: 1e-2, warmupSteps: 8 }),
);
while (!trainer.done) trainer.trainStep();
const after = await evaluateAccuracy(model, evalSet);
const last = (r: typeof after) => (100 * r.steps[r.steps.length - 1]!.accuracy).toFixed(1);
console.log(
  `running sum mod ${MOD}: accuracy ${last(before)} % untrained, ${last(after)} % after 80 steps`,
);
