/**
 * What the experiments of docs/experiments.md cost: ms per training step (the trainer's own step:
 * batch generation, forward, backward, clipping, AdamW) for every model of each sweep, after a
 * warm-up step, and the implied wall-clock for the documented number of steps, on the kernels the
 * CLI uses by default (native where they build, else portable, as the table's "kernels" says).
 * `LOOP_BENCH_EXPERIMENTS=default,phop,mano,lm,hybrid` selects sweeps (default: all).
 */
import { LoopedModel, type ModelConfigInput, makeConfig } from "@loop/looped";
import { mano, pHop, type Task } from "@loop/tasks";
import { loadTextTask } from "@loop/tasks/node";
import { resolveTrainOptions, Trainer } from "@loop/train";
import { enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";

export const name = "experiments";
export const description =
  "ms per training step of each docs/experiments.md model and the implied wall-clock";

interface Member {
  label: string;
  layers: number;
  loops: number;
  hybrid?: boolean;
}

interface Sweep {
  id: string;
  title: string;
  task: () => Promise<Task>;
  model: Omit<ModelConfigInput, "vocab_size" | "n_layers" | "backbone">;
  members: Member[];
  batch: number;
  steps: number;
  lr: number;
}

const ssm = (d_state: number, headdim: number) => ({ d_state, headdim, chunk_size: 64 });
const m = (layers: number, loops: number, hybrid = false): Member => ({
  label: `${layers}⊗${loops}${hybrid ? " hybrid" : ""}`,
  layers,
  loops,
  hybrid,
});

const SWEEPS: Sweep[] = [
  {
    id: "default",
    title: "default experiment (pnpm start): p-hop |Σ|=4 n=32 p=3 dense, d_model 32",
    task: async () => pHop({ alphabet: 4, length: 32, hops: 3, dense: true }),
    model: { d_model: 32, ssm: ssm(16, 16) },
    members: [m(1, 1), m(1, 2), m(1, 4)],
    batch: 32,
    steps: 800,
    lr: 6e-3,
  },
  {
    id: "phop",
    title: "p-hop |Σ|=4 n=256 p=16 (p=32 costs the same), d_model 64",
    task: async () => pHop({ alphabet: 4, length: 256, hops: 16 }),
    model: { d_model: 64, ssm: ssm(16, 16) },
    members: [m(1, 1), m(1, 12)],
    batch: 32,
    steps: 20000,
    lr: 1e-3,
  },
  {
    id: "mano",
    title: "Mano L=24 (iso-FLOPs 4⊗6 vs 24⊗1, plus 4⊗1), d_model 128",
    task: async () => mano({ maxOps: 24 }),
    model: { d_model: 128, ssm: ssm(32, 32) },
    members: [m(4, 1), m(4, 6), m(24, 1)],
    batch: 64,
    steps: 50000,
    lr: 1e-3,
  },
  {
    id: "lm",
    title: "LM on SOTU, BPE 4096, seq 256, d_model 256 (iso-parameter 2⊗1/2/4, iso-FLOPs 4⊗1, 8⊗1)",
    task: () => loadTextTask({ corpus: "sotu", vocabSize: 4096, seqLen: 256 }),
    model: { d_model: 256, ssm: ssm(64, 64) },
    members: [m(2, 1), m(2, 2), m(2, 4), m(4, 1), m(8, 1)],
    batch: 16,
    steps: 5000,
    lr: 1e-3,
  },
  {
    id: "hybrid",
    title: "LM on SOTU as above, hybrid backbone (attention in layer 1)",
    task: () => loadTextTask({ corpus: "sotu", vocabSize: 4096, seqLen: 256 }),
    model: { d_model: 256, ssm: ssm(64, 64) },
    members: [m(2, 1, true), m(2, 2, true), m(2, 4, true)],
    batch: 16,
    steps: 5000,
    lr: 1e-3,
  },
];

function selected(): Sweep[] {
  const env = process.env.LOOP_BENCH_EXPERIMENTS;
  if (!env) return SWEEPS;
  const ids = env.split(",");
  const unknown = ids.filter((i) => !SWEEPS.some((s) => s.id === i));
  if (unknown.length > 0)
    throw new Error(
      `LOOP_BENCH_EXPERIMENTS: unknown ${unknown.join(", ")} (have ${SWEEPS.map((s) => s.id).join(", ")})`,
    );
  return SWEEPS.filter((s) => ids.includes(s.id));
}

function hours(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export async function run(ctx: BenchContext): Promise<void> {
  const native = await enableNativeKernels();
  const kernels = native.enabled ? "native" : "portable";
  ctx.log(native.enabled ? "native kernels" : `portable kernels (native: ${native.reason})`);
  const rows: Row[] = [];
  const timing = ctx.quick ? { warmup: 0, repeats: 1 } : { warmup: 0, repeats: 3 };
  const tasks = new Map<string, Task>();
  for (const sw of selected()) {
    ctx.log(sw.title);
    const key = sw.id === "hybrid" ? "lm" : sw.id;
    let task = tasks.get(key);
    if (task === undefined) {
      task = await sw.task();
      tasks.set(key, task);
    }
    for (const threads of ctx.threadCounts) {
      await ctx.setThreads(threads);
      for (const mem of sw.members) {
        const cfg = makeConfig({
          ...sw.model,
          backbone: mem.hybrid ? "hybrid" : "mamba",
          attn_layers: mem.hybrid ? [1] : [],
          vocab_size: task.vocabSize,
          n_layers: mem.layers,
          n_loops: mem.loops,
        });
        const trainer = new Trainer(
          new LoopedModel(cfg, { seed: 0 }),
          task,
          resolveTrainOptions({
            steps: sw.steps,
            batchSize: sw.batch,
            lr: sw.lr,
            warmupSteps: 0,
            evalEvery: 0,
            checkpointEvery: 0,
          }),
        );
        // warm-up: one step, plus a second one when steps are cheap (JIT, pooled buffers)
        const w0 = performance.now();
        trainer.trainStep();
        if (performance.now() - w0 < 2000) trainer.trainStep();
        const t = await ctx.time(() => trainer.trainStep(), timing);
        rows.push({
          sweep: sw.id,
          model: mem.label,
          "B×T": `${sw.batch}×${task.seqLen}`,
          kernels,
          threads,
          "ms/step": Math.round(t.medianMs),
          "CPU ms/step": Math.round(t.cpuMs),
          steps: sw.steps,
          "wall-clock": hours(t.medianMs * sw.steps),
        });
        ctx.log(`  ${mem.label}, ${threads} thread(s): ${t.medianMs.toFixed(0)} ms/step`);
      }
    }
  }
  ctx.table(
    rows,
    "training steps of the docs/experiments.md sweeps (evaluation and checkpoints not included); " +
      "wall-clock = ms/step × steps",
  );
}
