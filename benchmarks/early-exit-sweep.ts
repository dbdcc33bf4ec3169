/**
 * The early-exit q sweep shared by benchmarks/early-exit.ts (standalone) and
 * benchmarks/early-exit.bench.ts (`pnpm bench early-exit`): on a trained gated checkpoint (with
 * its tokenizer.json) and a text corpus, every decoding mode is scored on held-out windows
 * (early-exit-eval.ts) and timed at batch 1 against full-R decoding: each timed run paired with a
 * full-R run just before it, speedup = median of the paired time ratios.
 */
import { join } from "node:path";
import { decodeStep, decodeStepEarlyExit, initDecodeState, type LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { loadCorpusSplit, readTokenizerFile } from "@loop/tasks/node";
import { evalEarlyExit, evalFullAndThreshold, flopsSaved } from "./early-exit-eval.js";

export const QS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1];
export const PROPAGATE_QS = [0.1, 0.2, 0.3, 0.4, 0.5];

export interface SweepOptions {
  /** Checkpoint folder holding config.json, model.safetensors and tokenizer.json. */
  dir: string;
  /** The corpus the model was trained on (its validation split is scored). */
  corpus: string;
  /** Held-out windows (batch of the evaluation decode), their length, timing tokens, repeats. */
  windows?: number;
  windowLength?: number;
  timingTokens?: number;
  reps?: number;
  /** Subset of QS / PROPAGATE_QS (default all). */
  qs?: readonly number[];
  propagateQs?: readonly number[];
}

interface Mode {
  label: string;
  q: number;
  maxStep?: number;
  skipped?: "carry" | "propagate";
}

export interface SweepResult {
  header: string;
  /** One row per mode, first full (R); columns as printed. */
  rows: Record<string, string>[];
  note: string;
}

interface Clock {
  wall: number;
  cpu: number;
}

/**
 * Wall and CPU seconds (user + system, all threads of this process) to decode `stream` at batch
 * 1, teacher-forced. CPU time is the steadier figure on a shared machine.
 */
function timeDecode(m: LoopedModel, stream: Int32Array, mode: Mode | null): Clock {
  const st = initDecodeState(m, 1, stream.length);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let t = 0; t < stream.length; t++) {
    if (mode === null) decodeStep(m, st, [stream[t]!], false);
    else decodeStepEarlyExit(m, st, [stream[t]!], mode);
  }
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const signed = (x: number, digits: number) => `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;

export async function earlyExitSweep(opts: SweepOptions): Promise<SweepResult> {
  const B = opts.windows ?? 16;
  const T = opts.windowLength ?? 128;
  const TT = opts.timingTokens ?? 512;
  const reps = opts.reps ?? 9;
  const model = loadCheckpoint(opts.dir);
  if (!model.exitGate) throw new Error(`${opts.dir}: the model has no exit gate`);
  const tokenizer = await readTokenizerFile(join(opts.dir, "tokenizer.json"));
  const split = await loadCorpusSplit({ corpus: opts.corpus });
  const ids = tokenizer.encode(split.validation.map((d) => d.text).join("\n"));
  if (ids.length < B * T + TT)
    throw new Error(`validation split has ${ids.length} tokens, need ${B * T + TT}`);
  const windows = Array.from({ length: B }, (_, b) => ids.slice(b * T, (b + 1) * T));
  const stream = ids.slice(B * T, B * T + TT);
  const c = model.config;
  const R = c.n_loops;
  const qs = opts.qs ?? QS;
  const modes: Mode[] = [
    ...qs.map((q) => ({ label: `q ${q}`, q })),
    ...(opts.propagateQs ?? PROPAGATE_QS).map((q) => ({
      label: `q ${q} prop`,
      q,
      skipped: "propagate" as const,
    })),
    ...Array.from({ length: R - 1 }, (_, k) => ({ label: `fixed ${k + 1}`, q: 1, maxStep: k + 1 })),
  ];
  const { full, threshold } = evalFullAndThreshold(model, windows, qs);
  timeDecode(model, stream, null); // warm-up (JIT, WASM)
  timeDecode(model, stream, modes[0]!);
  // Each timed run of a mode is paired with a full-R run just before it; the speedup is the
  // median of the paired ratios, which cancels the slow drift of a shared machine's load.
  const fullTimes: Clock[] = [];
  const eeTimes = modes.map(() => [] as Clock[]);
  const ratios = modes.map(() => [] as Clock[]);
  for (let rep = 0; rep < reps; rep++)
    modes.forEach((mode, k) => {
      const f = timeDecode(model, stream, null);
      const e = timeDecode(model, stream, mode);
      fullTimes.push(f);
      eeTimes[k]!.push(e);
      ratios[k]!.push({ wall: f.wall / e.wall, cpu: f.cpu / e.cpu });
    });
  const tps = (ts: Clock[]) => ({
    wall: TT / median(ts.map((x) => x.wall)),
    cpu: TT / median(ts.map((x) => x.cpu)),
  });
  const speedup = (rs: Clock[]) => ({
    wall: median(rs.map((x) => x.wall)),
    cpu: median(rs.map((x) => x.cpu)),
  });
  const fullTps = tps(fullTimes);
  const fullPpl = Math.exp(full.nll);
  const rows: Record<string, string>[] = [
    {
      mode: "full (R)",
      "mean z": String(R),
      skipped: "0.0%",
      "FLOPs saved": "0.0%",
      "tok/s": fullTps.wall.toFixed(0),
      speedup: "1.00",
      "CPU tok/s": fullTps.cpu.toFixed(0),
      "CPU speedup": "1.00",
      ppl: fullPpl.toFixed(3),
      "Δppl vs full": "",
      acc: pct(full.acc),
      Δacc: "",
      "thr ppl": "",
      "thr acc": "",
      "thr mean z": "",
    },
  ];
  modes.forEach((mode, k) => {
    const e = evalEarlyExit(model, windows, mode.q, mode.maxStep, mode.skipped);
    const thr = mode.skipped || mode.maxStep ? undefined : threshold[k];
    const ee = tps(eeTimes[k]!);
    const up = speedup(ratios[k]!);
    rows.push({
      mode: mode.label,
      "mean z": e.meanExit.toFixed(2),
      skipped: pct(e.skipped),
      "FLOPs saved": pct(flopsSaved(model, e.meanExit, T, mode.skipped)),
      "tok/s": ee.wall.toFixed(0),
      speedup: up.wall.toFixed(2),
      "CPU tok/s": ee.cpu.toFixed(0),
      "CPU speedup": up.cpu.toFixed(2),
      ppl: Math.exp(e.nll).toFixed(3),
      "Δppl vs full": signed(Math.exp(e.nll) - fullPpl, 3),
      acc: pct(e.acc),
      Δacc: signed(100 * (e.acc - full.acc), 1),
      "thr ppl": thr ? Math.exp(thr.nll).toFixed(3) : "",
      "thr acc": thr ? pct(thr.acc) : "",
      "thr mean z": thr ? thr.meanExit.toFixed(2) : "",
    });
  });
  return {
    header:
      `model ${opts.dir}: ${c.backbone} ${c.n_layers}⊗${R}, d_model ${c.d_model}, vocab ${c.vocab_size}; ` +
      `eval ${B}×${T} held-out tokens, timing ${TT} tokens at batch 1, median of ${reps}`,
    rows,
    note:
      "skipped: layer applications not run; FLOPs saved: docs/model.md §7 estimate net of KV (and, " +
      "for prop, SSM) propagation; speedup: median over repeats of full-R time ÷ " +
      "mode time, each run paired with a full-R run just before it (wall clock / CPU time); Δ vs full decoding (logits(R)); thr: threshold exit with all R steps run (the " +
      "paper's inference, nothing saved); prop: skipped Mamba states take h(z) in (skipped: " +
      "'propagate') instead of being carried unchanged; fixed k: every token exits at step k " +
      "(q = 1, maxStep k), i.e. the loop truncated to k steps.",
  };
}
