/**
 * Recurrent decoding, as `looplm generate` runs it (@loop/looped decodeStep: one state per
 * (loop step, layer), every new token through all R loop steps, final-step logits, greedy pick),
 * in tokens/s for batch 1 and 8, against an eager PyTorch step function of the same model
 * (benchmarks/torch/decode.py) on the same thread count. A 16-token prompt is prefilled first
 * (untimed; the PyTorch script feeds it token by token, which leaves the same states), then 64
 * new tokens are timed. Then the prompt itself: a 256-token prompt at batch 1 through the
 * chunked prefill (`prefill`, as generate does it) against the same prompt fed one decodeStep at
 * a time, and PyTorch's chunked prefill (model.py's forward keeping the final states) and step
 * function on the same prompt. PyTorch columns for Mamba-2 configurations only (the
 * transcription has no KV cache); `LOOP_BENCH_DECODE_CONFIGS=3,4` (default 1, 3, 5).
 */
import {
  decodeStep,
  initDecodeState,
  LoopedModel,
  makeConfig,
  prefill,
  sampleToken,
} from "@loop/looped";
import { Rng } from "@loop/tensor";
import { enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";
import { torchConfig } from "./lib/torch-config.js";
import { type BenchConfig, selectedConfigs } from "./lib/training-step.js";

export const name = "decode";
export const description =
  "recurrent decoding tokens/s (looplm generate's step), batch 1 and 8, vs a PyTorch step function";

const PROMPT = 16;
const NEW = 64;
/** Prompt length of the prefill measurement. */
const LONG = 256;

/** Decode `NEW` tokens after a PROMPT-token prompt for `batch` sequences; returns a function
 * that runs the whole thing and reports the milliseconds of the NEW tokens. */
/** Whether torch/decode.py transcribes the configuration (Mamba-2 layers only: no KV cache). */
function torchHas(c: BenchConfig): boolean {
  return c.model.backbone === "mamba";
}

function benchModel(c: BenchConfig): LoopedModel {
  return new LoopedModel(makeConfig({ tie_embeddings: true, ...c.model }), { seed: 0 });
}

function makeDecode(c: BenchConfig, batch: number): () => number {
  const model = benchModel(c);
  const V = model.config.vocab_size;
  const greedy = new Rng(0); // (temperature 0: never drawn from)
  return () => {
    const st = initDecodeState(model, batch, PROMPT + NEW);
    const prompt = Array.from({ length: batch }, (_, b) => Array(PROMPT).fill((7 * b + 3) % V));
    let ids = prompt.map((row) => row[0]!);
    let logits = prefill(model, st, prompt, false).logits[0]!;
    const t0 = performance.now();
    for (let t = 0; t < NEW; t++) {
      ids = ids.map((_, b) => sampleToken(logits.data.subarray(b * V, (b + 1) * V), 0, 0, greedy));
      logits = decodeStep(model, st, ids, false).logits[0]!;
    }
    return performance.now() - t0;
  };
}

/** A LONG-token prompt at batch 1, prefilled in one chunked pass or fed one decodeStep at a
 * time; returns the function that feeds it into a fresh state. */
function makePromptFeed(c: BenchConfig, chunked: boolean): () => void {
  const model = benchModel(c);
  const rng = new Rng(1);
  const prompt = Array.from({ length: LONG }, () => rng.int(model.config.vocab_size));
  return () => {
    const st = initDecodeState(model, 1, LONG);
    if (chunked) prefill(model, st, [prompt], false);
    else for (const t of prompt) decodeStep(model, st, [t], false);
  };
}

async function promptRows(
  ctx: BenchContext,
  configs: BenchConfig[],
  haveTorch: boolean,
): Promise<Row[]> {
  const rows: Row[] = [];
  const repeats = ctx.quick ? 1 : 5;
  for (const threads of ctx.threadCounts) {
    await ctx.setThreads(threads);
    for (const c of configs) {
      const chunked = (await ctx.time(makePromptFeed(c, true), { warmup: 1, repeats })).medianMs;
      const stepped = (await ctx.time(makePromptFeed(c, false), { warmup: 1, repeats })).medianMs;
      const row: Row = {
        config: c.name,
        threads,
        "prefill tok/s": Math.round((LONG * 1000) / chunked),
        "token-by-token tok/s": Math.round((LONG * 1000) / stepped),
        "prefill speed-up": Number((stepped / chunked).toFixed(2)),
      };
      if (haveTorch && torchHas(c)) {
        const tr = (await ctx.torch("decode.py", [
          JSON.stringify({
            config: torchConfig(c),
            chunk: makeConfig(c.model).ssm.chunk_size,
            threads,
            prefill: LONG,
            reps: repeats,
          }),
        ])) as { prefill_seconds: number; step_seconds: number };
        row["torch prefill tok/s"] = Math.round(LONG / tr.prefill_seconds);
        row["torch token-by-token tok/s"] = Math.round(LONG / tr.step_seconds);
        row["ours/torch prefill"] = Number((tr.prefill_seconds / (chunked / 1000)).toFixed(2));
      }
      rows.push(row);
    }
  }
  return rows;
}

export async function run(ctx: BenchContext): Promise<void> {
  const configs = selectedConfigs("LOOP_BENCH_DECODE_CONFIGS", [1, 3, 5]);
  const native = await enableNativeKernels();
  ctx.log(native.enabled ? "native kernels" : `portable kernels (native: ${native.reason})`);
  const haveTorch = await ctx.torchAvailable();
  if (!haveTorch)
    ctx.log('PyTorch comparison skipped: `/usr/bin/python3 -c "import torch"` failed.');
  const reps = ctx.quick ? 1 : 3;
  const rows: Row[] = [];
  let torchVersion = "";
  for (const threads of ctx.threadCounts) {
    await ctx.setThreads(threads);
    for (const c of configs) {
      for (const batch of [1, 8]) {
        const decode = makeDecode(c, batch);
        decode(); // warm-up
        const ms: number[] = [];
        for (let i = 0; i < reps; i++) ms.push(decode());
        ms.sort((a, b) => a - b);
        const ours = ms[ms.length >> 1]!;
        const row: Row = {
          config: c.name,
          batch,
          threads,
          "ms/token": Number((ours / NEW).toFixed(2)),
          "tok/s": Math.round((batch * NEW * 1000) / ours),
        };
        if (haveTorch && torchHas(c)) {
          const tr = (await ctx.torch("decode.py", [
            JSON.stringify({
              config: torchConfig(c),
              threads,
              batch,
              prompt: PROMPT,
              new: NEW,
              reps,
            }),
          ])) as { torch: string; seconds: number };
          torchVersion = tr.torch;
          row["torch tok/s"] = Math.round((batch * NEW) / tr.seconds);
          row["ours/torch"] = Number((tr.seconds / (ours / 1000)).toFixed(2));
        }
        rows.push(row);
      }
    }
  }
  if (torchVersion)
    ctx.log(`PyTorch ${torchVersion}, eager, no_grad step function (benchmarks/torch/decode.py)`);
  ctx.table(
    rows,
    `recurrent decoding: ${NEW} new tokens after a ${PROMPT}-token prefilled prompt; ` +
      "tok/s counts every sequence of the batch; ours/torch > 1 means we are faster",
  );
  ctx.table(
    await promptRows(ctx, configs, haveTorch),
    `prompt of ${LONG} tokens, batch 1: chunked prefill (generate's) vs one decodeStep per token; ` +
      "PyTorch: the same two ways (torch/decode.py); ours/torch > 1 means we are faster",
  );
}
