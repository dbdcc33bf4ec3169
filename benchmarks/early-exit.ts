/**
 * Early-exit decoding (packages/looped/src/decode-early-exit.ts) on a trained gated model, over a
 * q sweep: share of layer applications skipped, batch-1 decode tokens/s against running all R
 * steps (same run, interleaved), and the change in next-token perplexity/accuracy on held-out text
 * against full decoding (logits(R)), the paper's threshold exit (all steps run, logits(z)) and
 * the loop truncated at a fixed depth k for every token. Run (docs/early-exit.md trains the model):
 *   pnpm exec tsx --conditions=@loop/source benchmarks/early-exit.ts <checkpoint dir> <corpus file>
 *     [windows=8] [window length=128] [timing tokens=256] [reps=5]
 * The checkpoint folder must hold tokenizer.json (as `looplm train` writes to <run>/final).
 */
import { join } from "node:path";
import { decodeStep, decodeStepEarlyExit, initDecodeState, type LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { loadCorpusSplit, readTokenizerFile } from "@loop/tasks/node";
import { evalEarlyExit, evalFullAndThreshold, flopsSaved } from "./early-exit-eval.js";

const [dir, corpus, ...rest] = process.argv.slice(2);
if (!dir || !corpus) {
  console.error(
    "usage: early-exit.ts <checkpoint dir> <corpus file> [B] [T] [timing tokens] [reps]",
  );
  process.exit(2);
}
const [B, T, TT, reps] = [8, 128, 256, 5].map((d, i) => (rest[i] ? Number(rest[i]) : d)) as [
  number,
  number,
  number,
  number,
];
const QS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1];
const PROPAGATE_QS = [0.1, 0.2, 0.3, 0.4, 0.5];

const model = loadCheckpoint(dir);
if (!model.exitGate) throw new Error(`${dir}: the model has no exit gate`);
const tokenizer = await readTokenizerFile(join(dir, "tokenizer.json"));
const split = await loadCorpusSplit({ corpus });
const ids = tokenizer.encode(split.validation.map((d) => d.text).join("\n"));
if (ids.length < B * T + TT)
  throw new Error(`validation split has ${ids.length} tokens, need ${B * T + TT}`);
const windows = Array.from({ length: B }, (_, b) => ids.slice(b * T, (b + 1) * T));
const stream = ids.slice(B * T, B * T + TT);

/**
 * Wall and CPU seconds (user + system, all threads of this process) to decode the timing stream
 * at batch 1, teacher-forced. CPU time is the steadier figure on a shared machine.
 */
interface Mode {
  label: string;
  q: number;
  maxStep?: number;
  skipped?: "carry" | "propagate";
}

function timeDecode(m: LoopedModel, mode: Mode | null): { wall: number; cpu: number } {
  const st = initDecodeState(m, 1, TT);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let t = 0; t < TT; t++) {
    if (mode === null) decodeStep(m, st, [stream[t]!], false);
    else decodeStepEarlyExit(m, st, [stream[t]!], mode);
  }
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const c = model.config;
console.log(
  `model ${dir}: ${c.backbone} ${c.n_layers}⊗${c.n_loops}, d_model ${c.d_model}, vocab ${c.vocab_size}; ` +
    `eval ${B}×${T} held-out tokens, timing ${TT} tokens at batch 1, median of ${reps}`,
);
const R = c.n_loops;
const modes: Mode[] = [
  ...QS.map((q) => ({ label: `q ${q}`, q })),
  ...PROPAGATE_QS.map((q) => ({ label: `q ${q} prop`, q, skipped: "propagate" as const })),
  ...Array.from({ length: R - 1 }, (_, k) => ({ label: `fixed ${k + 1}`, q: 1, maxStep: k + 1 })),
];
const { full, threshold } = evalFullAndThreshold(model, windows, QS);
timeDecode(model, null); // warm-up (JIT, WASM)
timeDecode(model, modes[5]!);
const fullTimes: { wall: number; cpu: number }[] = [];
const eeTimes = modes.map(() => [] as { wall: number; cpu: number }[]);
for (let rep = 0; rep < reps; rep++) {
  modes.forEach((mode, k) => {
    fullTimes.push(timeDecode(model, null));
    eeTimes[k]!.push(timeDecode(model, mode));
  });
}
const tps = (ts: { wall: number; cpu: number }[]) => ({
  wall: TT / median(ts.map((x) => x.wall)),
  cpu: TT / median(ts.map((x) => x.cpu)),
});
const fullTps = tps(fullTimes);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const rows = [
  [
    "mode",
    "mean z",
    "skipped",
    "FLOPs saved",
    "tok/s",
    "speedup",
    "CPU tok/s",
    "CPU speedup",
    "ppl",
    "Δppl vs full",
    "acc",
    "Δacc",
    "thr ppl",
    "thr acc",
    "thr mean z",
  ],
  [
    "full (R)",
    String(c.n_loops),
    "0.0%",
    "0.0%",
    fullTps.wall.toFixed(0),
    "1.00",
    fullTps.cpu.toFixed(0),
    "1.00",
    Math.exp(full.nll).toFixed(3),
    "",
    pct(full.acc),
    "",
    "",
    "",
    "",
  ],
];
modes.forEach((mode, k) => {
  const e = evalEarlyExit(model, windows, mode.q, mode.maxStep, mode.skipped);
  const thr = mode.skipped || mode.maxStep ? undefined : threshold[k];
  const ee = tps(eeTimes[k]!);
  rows.push([
    mode.label,
    e.meanExit.toFixed(2),
    pct(e.skipped),
    pct(flopsSaved(model, e.meanExit, T, mode.skipped)),
    ee.wall.toFixed(0),
    (ee.wall / fullTps.wall).toFixed(2),
    ee.cpu.toFixed(0),
    (ee.cpu / fullTps.cpu).toFixed(2),
    Math.exp(e.nll).toFixed(3),
    `${Math.exp(e.nll) - Math.exp(full.nll) >= 0 ? "+" : ""}${(Math.exp(e.nll) - Math.exp(full.nll)).toFixed(3)}`,
    pct(e.acc),
    `${e.acc - full.acc >= 0 ? "+" : ""}${(100 * (e.acc - full.acc)).toFixed(1)}`,
    thr ? Math.exp(thr.nll).toFixed(3) : "",
    thr ? pct(thr.acc) : "",
    thr ? thr.meanExit.toFixed(2) : "",
  ]);
});
const widths = rows[0]!.map((_, j) => Math.max(...rows.map((r) => r[j]!.length)));
for (const r of rows) console.log(`| ${r.map((x, j) => x.padStart(widths[j]!)).join(" | ")} |`);
console.log(
  "skipped: layer applications not run; FLOPs saved: model.md §7 estimate net of KV propagation; " +
    "speedup: tok/s ÷ full tok/s (same run, wall clock / CPU time); Δ vs full decoding (logits(R)); thr: threshold exit " +
    "with all R steps run (the paper's inference, nothing saved); fixed k: every token exits at " +
    "step k (q = 1, maxStep k), i.e. the loop truncated to k steps; prop: skipped Mamba states " +
    "take h(z) in (skipped: 'propagate') instead of being carried unchanged.",
);
