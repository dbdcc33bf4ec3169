/**
 * Exit-gate op timings: forward + backward of each fused op of @loop/exit-gate on one batch,
 * against the same maths in eager PyTorch (benchmarks/exit-gate-torch.py, 1 thread) when
 * /usr/bin/python3 has torch. Run:
 *   pnpm exec tsx --conditions=@loop/source benchmarks/exit-gate.ts [R B T D V]
 * Prints a table of median milliseconds and the looplm/PyTorch ratio (lower is better).
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  exitPdf,
  gateLogits,
  mixtureLogits,
  stage1Loss,
  stage1Objective,
  stage2Objective,
} from "@loop/exit-gate";
import { backward, intTensor, Rng, randn, type Tensor, tensor } from "@loop/tensor";

const [R, B, T, D, V] = (
  process.argv.slice(2).length === 5 ? process.argv.slice(2).map(Number) : [4, 8, 512, 512, 512]
) as [number, number, number, number, number];
const reps = 7;

const readouts = Array.from({ length: R }, (_, r) => randn([B, T, D], 10 + r));
const w = randn([1, D], 1, { std: 1 / Math.sqrt(D) });
const b = randn([1], 2);
const a0 = randn([R, B, T], 3);
const logits = Array.from({ length: R }, (_, r) => randn([B, T, V], 20 + r));
const rng = new Rng(4);
const targets = intTensor(
  Array.from({ length: B * T }, (_, i) => (i % 3 === 0 ? -100 : rng.int(V))),
  [B, T],
);
const ce0 = tensor(rng.fillUniform(new Float32Array(R * B * T), 2, 3), [R, B, T], true);
const ceConst = tensor(ce0.data, ce0.shape, false);
const pdf = tensor(exitPdf(a0).data, [R, B, T], true);
const ones = (t: Tensor) => new Float32Array(t.size).fill(1);

const cases: Record<string, () => Tensor> = {
  gateLogits: () => gateLogits(readouts, w, b),
  exitPdf: () => exitPdf(a0),
  stage1Objective: () => stage1Objective(a0, ce0, targets),
  stage2Objective: () => stage2Objective(a0, ceConst, targets),
  mixtureLogits: () => mixtureLogits(logits, pdf),
  "stage1 end-to-end": () => stage1Loss(gateLogits(readouts, w, b), logits, targets),
};

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

const ours: Record<string, number> = {};
for (const [name, fn] of Object.entries(cases)) {
  const ts: number[] = [];
  for (let i = 0; i < reps + 2; i++) {
    const t0 = performance.now();
    const y = fn();
    backward([y], [ones(y)]);
    const dt = performance.now() - t0;
    if (i >= 2) ts.push(dt);
  }
  ours[name] = median(ts);
}

let torch: Record<string, number> | null = null;
const py = spawnSync(
  "/usr/bin/python3",
  [
    join(dirname(fileURLToPath(import.meta.url)), "exit-gate-torch.py"),
    JSON.stringify({ R, B, T, D, V, reps }),
  ],
  {
    encoding: "utf8",
    env: Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => k !== "OPENBLAS_CORETYPE" && k !== "OPENBLAS_L2_SIZE",
      ),
    ),
  },
);
if (py.status === 0) torch = JSON.parse(py.stdout.trim().split("\n").pop()!);
else console.error(`PyTorch reference unavailable: ${py.stderr.trim().split("\n").pop()}`);

console.log(
  `exit-gate ops, forward + backward, R=${R} B=${B} T=${T} D=${D} V=${V}, median of ${reps}`,
);
console.log("| op                | looplm ms | PyTorch ms | ratio |");
console.log("| ----------------- | --------: | ---------: | ----: |");
for (const name of Object.keys(cases)) {
  const o = ours[name]!;
  const t = torch?.[name];
  const cells = [
    name.padEnd(17),
    o.toFixed(2).padStart(9),
    (t === undefined ? "-" : t.toFixed(2)).padStart(10),
    (t === undefined ? "-" : (o / t).toFixed(2)).padStart(5),
  ];
  console.log(`| ${cells.join(" | ")} |`);
}
