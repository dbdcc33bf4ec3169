/**
 * @loop/tasks speed: BPE training on the SOTU corpus (count pre-tokens, merge), encode/decode
 * throughput, and Mano / p-hop batch generation.
 * Run: pnpm exec tsx --conditions=@loop/source benchmarks/tasks.ts
 */
import { countPreTokens, mano, pHop, trainBpeFromCounts } from "@loop/tasks";
import { loadCorpusSplit } from "@loop/tasks/node";

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const r = fn();
  return [r, (performance.now() - t0) / 1000];
}

const rows: [string, string, string][] = [];
const t0 = performance.now();
const split = await loadCorpusSplit({ corpus: "sotu" });
const read = (performance.now() - t0) / 1000;
const texts = split.train.map((d) => d.text);
const chars = texts.reduce((n, t) => n + t.length, 0);
rows.push([
  "read + split sotu",
  `${read.toFixed(2)} s`,
  `${split.train.length} train docs, ${(chars / 1e6).toFixed(2)} M chars`,
]);

const [counts, tCount] = time(() => countPreTokens(texts));
rows.push(["count pre-tokens", `${tCount.toFixed(2)} s`, `${counts.size} distinct words`]);
const [tok, tTrain] = time(() => trainBpeFromCounts(counts, { vocabSize: 4096 }));
rows.push(["BPE merges to 4096", `${tTrain.toFixed(2)} s`, `${tok.merges.length} merges`]);

const valid = split.validation.map((d) => d.text).join("\n");
const bytes = new TextEncoder().encode(valid).length;
const [ids, tEnc] = time(() => tok.encode(valid));
rows.push([
  "encode validation",
  `${tEnc.toFixed(2)} s`,
  `${(valid.length / tEnc / 1e6).toFixed(2)} M chars/s, ${(bytes / ids.length).toFixed(2)} bytes/token`,
]);
const [back, tDec] = time(() => tok.decode(ids));
rows.push([
  "decode validation",
  `${tDec.toFixed(2)} s`,
  `${(ids.length / tDec / 1e6).toFixed(2)} M tokens/s, exact: ${back === valid}`,
]);

for (const [name, task, n] of [
  ["mano L=24 batch 256", mano({ maxOps: 24 }), 256],
  ["phop |Σ|=4 n=256 p=32 batch 256", pHop({ alphabet: 4, length: 256, hops: 32 }), 256],
] as const) {
  task.trainBatch(task.startCursor(0), 16); // warm-up
  const [, t] = time(() => {
    let c = task.startCursor(1);
    for (let i = 0; i < 10; i++) c = task.trainBatch(c, n).cursor;
  });
  rows.push([
    name,
    `${((t / 10) * 1000).toFixed(1)} ms/batch`,
    `${((10 * n) / t).toFixed(0)} rows/s`,
  ]);
}

const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i]!)).join("  "));
