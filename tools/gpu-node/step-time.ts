/**
 * Step time on the CUDA backend for models of the paper's size (tools/gpu-node/first-run.sh;
 * in the offline bundle lib/js/gpu-step-time.js): a Mamba-2 d_model 768 `24⊗1` (mamba2-130m's
 * shape), its looped iso-FLOPs `6⊗4`, and a hybrid `6⊗4`, at sequence 1024 and the largest batch
 * of 16, 8, 4, 2, 1 whose training step fits the GPU — counted, not guessed: one step of each
 * model on the recording device gives the bytes its caching allocator holds (fit-batch.ts).
 * For each: warm-up steps, then the mean wall time of the next ones (the clock stops after the
 * last step's read-back), printed as ms per step, tokens/s and model TFLOP/s (@loop/looped's
 * flopsPerToken, training ≈ 3 × forward), with the same model in PyTorch eager on the same GPU
 * beside it (benchmarks/torch/model.py; bf16 autocast, or fp32/tf32) where python3 imports
 * torch. `--decode` times generation on the device instead (@loop/looped `generateOn`, the state
 * on the GPU): a 16-token prompt and DECODE_TOKENS greedy tokens at full depth and, for a looped
 * model, every token stopping at half its loop steps (`fixed`), with `generate --timing`'s rates
 * (prefill, decode, first and last 64 tokens, mean exit step). Each model's device memory is
 * given back before the next one starts.
 *   gpu-step-time [--precision bf16|tf32|fp32] [--decode] [--no-torch] [--json FILE] [--models a,b]
 * Prints one Markdown table (for summary.md); one line naming why when the GPU cannot start.
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type CudaPrecision, cudaBackend, parseCudaPrecision } from "@loop/cuda";
import { startCudaDevice } from "@loop/cuda/node";
import {
  type DecodeTiming,
  decodeClock,
  flopsPerToken,
  generateOn,
  LoopedModel,
  type ModelConfigInput,
  parseConfig,
  type StepPolicy,
} from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { torchConfig } from "../../benchmarks/lib/torch-config.js";
import { BATCHES, fitBatch } from "./fit-batch.js";
import { SEQ, STEP_MODELS } from "./step-models.js";

/** Tokens generated per decode row: enough for the first and the last 64 to be apart. */
const DECODE_TOKENS = 256;

const { values } = parseArgs({
  options: {
    precision: { type: "string", default: "bf16" },
    decode: { type: "boolean", default: false },
    "no-torch": { type: "boolean", default: false },
    json: { type: "string" },
    models: { type: "string" },
  },
});

/** One row of the table, as the JSON holds it. */
interface Row {
  model: string;
  precision: CudaPrecision;
  batch?: number;
  needGiB?: number;
  msPerStep?: number;
  tokensPerS?: number;
  tflops?: number;
  torchMsPerStep?: number | null;
  torchNote?: string;
  decode?: ({ policy: string } & DecodeTiming)[];
  error?: string;
}

/** benchmarks/torch/model.py: beside this module in the bundle (../torch), else the repository's. */
function torchScript(): string | null {
  for (const rel of ["../torch/model.py", "../../benchmarks/torch/model.py"]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  return null;
}

/** The same model in PyTorch eager on the GPU: its median step seconds, or why not. */
function torchStep(
  name: string,
  input: ModelConfigInput,
  batch: number,
  precision: CudaPrecision,
): number | string {
  const script = torchScript();
  if (!script) return "benchmarks/torch/model.py is not here";
  const config = torchConfig({ name, model: input, batch, seq: SEQ });
  const args = {
    configs: [config],
    chunk: parseConfig(input).ssm.chunk_size,
    threads: [1],
    warmup: 2,
    reps: 5,
    device: "cuda",
    ...(precision === "bf16" ? { autocast: "bf16" } : {}),
  };
  // (tf32: PyTorch's fp32 matmuls on tensor cores too, as the backend's tf32 GEMMs)
  const env = precision === "tf32" ? { ...process.env, NVIDIA_TF32_OVERRIDE: "1" } : process.env;
  const r = spawnSync("python3", [script, JSON.stringify(args)], {
    encoding: "utf8",
    timeout: 120_000,
    env,
  });
  if (r.error) return `python3: ${r.error.message}`;
  if (r.status !== 0) return (r.stderr || "failed").trim().split("\n").pop() ?? "failed";
  return (JSON.parse(r.stdout) as { results: { seconds: number }[] }).results[0]!.seconds;
}

const precision = parseCudaPrecision(values.precision ?? "bf16");
const wanted = values.models?.split(",");
const models = STEP_MODELS.filter(([name]) => !wanted || wanted.some((w) => name.includes(w)));
const rows: Row[] = [];
const save = () => {
  if (values.json) writeFileSync(values.json, `${JSON.stringify({ precision, rows }, null, 2)}\n`);
};

const started = await startCudaDevice();
if (!started.ok) {
  console.log(`cuda could not start: ${started.reason}`);
  save();
  process.exit(2);
}
const info = started.info;
console.log(
  `device: ${info.name} (${info.arch}, ${(info.memoryBytes / 2 ** 30).toFixed(1)} GiB); GEMMs ${"cublasLt" in info.gemm ? `on cuBLASLt ${info.gemm.cublasLt}` : `on the own kernels (${info.gemm.own})`}; precision ${precision}`,
);
for (const [name, input] of models) {
  const cfg = parseConfig(input);
  const row: Row = { model: name, precision };
  rows.push(row);
  const backend = cudaBackend(started.device, { precision });
  try {
    if (values.decode) {
      const model = new LoopedModel(cfg, { seed: 0 });
      const rng = new Rng(1);
      const prompt = Array.from({ length: 16 }, () => rng.int(cfg.vocab_size));
      const R = cfg.n_loops;
      const policies: [string, StepPolicy][] = [["full", { kind: "full" }]];
      if (R > 1)
        policies.push([`fixed:${R / 2}`, { kind: "fixed", step: Math.max(1, Math.floor(R / 2)) }]);
      row.decode = [];
      for (const [label, policy] of policies) {
        const clock = decodeClock();
        const it = generateOn(backend.ops, model, prompt, {
          maxNewTokens: DECODE_TOKENS,
          temperature: 0,
          policy,
        });
        let r = await it.next();
        for (; !r.done; r = await it.next()) {
          clock.arrived();
          clock.resume();
        }
        const fed = r.value.exitSteps.slice(prompt.length);
        row.decode.push({ policy: label, ...clock.summary(prompt.length, fed.length ? fed : [R]) });
      }
    } else {
      const fit = await fitBatch(input, precision, info.memoryBytes, BATCHES, SEQ);
      if (fit.batch === null) throw new Error(`no batch fits: ${fit.why}`);
      row.batch = fit.batch;
      row.needGiB = fit.needBytes / 2 ** 30;
      const o = resolveTrainOptions({ batchSize: fit.batch });
      const model = new LoopedModel(cfg, { seed: 0 });
      const engine = deviceStepEngine(deviceTraining(model, backend.ops, o), o);
      const rng = new Rng(1);
      const tokens = Int32Array.from({ length: fit.batch * SEQ }, () => rng.int(cfg.vocab_size));
      const batch = { tokens, targets: tokens, shape: [fit.batch, SEQ] as [number, number] };
      try {
        for (let s = 0; s < 3; s++) await engine.step([batch], o.lr);
        const n = 10;
        const t0 = performance.now();
        for (let s = 0; s < n; s++) await engine.step([batch], o.lr);
        const sec = (performance.now() - t0) / 1000 / n;
        row.msPerStep = sec * 1000;
        row.tokensPerS = (fit.batch * SEQ) / sec;
        row.tflops =
          (flopsPerToken(cfg, { seqLen: SEQ }).trainPerToken * fit.batch * SEQ) / sec / 1e12;
      } finally {
        engine.dispose();
      }
      const torch = values["no-torch"]
        ? "PyTorch not run (--no-torch)"
        : torchStep(name, input, fit.batch, precision);
      if (typeof torch === "number") row.torchMsPerStep = torch * 1000;
      else {
        row.torchMsPerStep = null;
        row.torchNote = torch;
      }
    }
  } catch (e) {
    row.error = (e instanceof Error ? e.message : String(e)).split("\n")[0];
  } finally {
    backend.release();
  }
  save();
}
started.device.destroy();

const f = (v: number | undefined | null, d = 1) =>
  v === undefined || v === null ? "—" : v.toFixed(d);
if (values.decode) {
  console.log(
    "\n| model | precision | policy | prefill tok/s | decode tok/s | first 64 tok/s | last 64 tok/s | mean exit step | note |\n|---|---|---|---|---|---|---|---|---|",
  );
  for (const r of rows)
    for (const d of r.decode ?? [{ policy: "—" } as Partial<DecodeTiming> & { policy: string }])
      console.log(
        `| ${r.model} | ${r.precision} | ${d.policy} | ${f(d.prefill_tok_s)} | ${f(d.decode_tok_s)} | ${f(d.first64_tok_s)} | ${f(d.last64_tok_s)} | ${f(d.mean_exit_step, 2)} | ${r.error ?? "recurrent state on the GPU, batch 1, greedy"} |`,
      );
} else {
  console.log(
    `\n| model | precision | batch × ${SEQ} | needs (GiB, counted) | ms/step | tokens/s | model TFLOP/s | PyTorch eager ms/step | × PyTorch | note |\n|---|---|---|---|---|---|---|---|---|---|`,
  );
  for (const r of rows) {
    const ratio =
      r.torchMsPerStep && r.msPerStep ? (r.torchMsPerStep / r.msPerStep).toFixed(2) : "—";
    console.log(
      `| ${r.model} | ${r.precision} | ${r.batch ?? "—"} | ${f(r.needGiB)} | ${f(r.msPerStep)} | ${f(r.tokensPerS, 0)} | ${f(r.tflops, 2)} | ${f(r.torchMsPerStep)} | ${ratio} | ${r.error ?? r.torchNote ?? ""} |`,
    );
  }
}
process.exit(rows.some((r) => r.error) ? 1 : 0);
