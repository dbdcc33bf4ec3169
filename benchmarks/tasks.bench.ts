/**
 * @loop/tasks speed: BPE training on the SOTU corpus (count pre-tokens, merge), encode/decode
 * throughput, and Mano / p-hop batch generation. Single-threaded (none of it uses the pool).
 */
import { mano, pHop } from "@loop/tasks";
import { countPreTokens, trainBpeFromCounts } from "@loop/tasks/internal";
import { loadCorpusSplit } from "@loop/tasks/node";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";

export const name = "tasks";
export const description =
  "BPE training, encode/decode, Mano and p-hop batch generation (@loop/tasks)";

function timed<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const r = fn();
  return [r, (performance.now() - t0) / 1000];
}

export async function run(ctx: BenchContext): Promise<void> {
  const rows: Row[] = [];
  const t0 = performance.now();
  const split = await loadCorpusSplit({ corpus: "sotu" });
  const read = (performance.now() - t0) / 1000;
  const texts = split.train.map((d) => d.text);
  const chars = texts.reduce((n, t) => n + t.length, 0);
  rows.push({
    step: "read + split sotu",
    time: `${read.toFixed(2)} s`,
    result: `${split.train.length} train docs, ${(chars / 1e6).toFixed(2)} M chars`,
  });
  const [counts, tCount] = timed(() => countPreTokens(texts));
  rows.push({
    step: "count pre-tokens",
    time: `${tCount.toFixed(2)} s`,
    result: `${counts.size} distinct words`,
  });
  const [tok, tTrain] = timed(() => trainBpeFromCounts(counts, { vocabSize: 4096 }));
  rows.push({
    step: "BPE merges to 4096",
    time: `${tTrain.toFixed(2)} s`,
    result: `${tok.merges.length} merges`,
  });
  const valid = split.validation.map((d) => d.text).join("\n");
  const bytes = new TextEncoder().encode(valid).length;
  const [ids, tEnc] = timed(() => tok.encode(valid));
  rows.push({
    step: "encode validation",
    time: `${tEnc.toFixed(2)} s`,
    result: `${(valid.length / tEnc / 1e6).toFixed(2)} M chars/s, ${(bytes / ids.length).toFixed(2)} bytes/token`,
  });
  const [back, tDec] = timed(() => tok.decode(ids));
  rows.push({
    step: "decode validation",
    time: `${tDec.toFixed(2)} s`,
    result: `${(ids.length / tDec / 1e6).toFixed(2)} M tokens/s, exact: ${back === valid}`,
  });
  const batches = ctx.quick ? 3 : 10;
  for (const [label, task, n] of [
    ["mano L=24 batch 256", mano({ maxOps: 24 }), 256],
    ["phop |Σ|=4 n=256 p=32 batch 256", pHop({ alphabet: 4, length: 256, hops: 32 }), 256],
  ] as const) {
    task.trainBatch(task.startCursor(0), 16); // warm-up
    const [, t] = timed(() => {
      let c = task.startCursor(1);
      for (let i = 0; i < batches; i++) c = task.trainBatch(c, n).cursor;
    });
    rows.push({
      step: label,
      time: `${((t / batches) * 1000).toFixed(1)} ms/batch`,
      result: `${((batches * n) / t).toFixed(0)} rows/s`,
    });
  }
  ctx.table(rows, "@loop/tasks, one thread");
}
