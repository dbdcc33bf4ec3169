/**
 * Time training steps on the CUDA backend (tools/cuda-first-run.sh) for models of the paper's
 * size at batch × sequence 16 × 1024: a Mamba-2 d_model 768 `24⊗1` (mamba2-130m's shape), its
 * looped iso-FLOPs `6⊗4`, and a hybrid. For each: a few warm-up steps, then the mean wall time of
 * the next ones (the engine keeps one step in flight; the clock stops after the last step's
 * read-back), printed as ms per step, tokens/s and model FLOP/s (@loop/looped's flopsPerToken,
 * training ≈ 3 × forward), with the same model in PyTorch on the same GPU beside it
 * (benchmarks/torch/model.py, bf16 autocast or fp32) when python3 with torch is there.
 * A first measurement for benchmarks/RESULTS.md, not the bench harness (`pnpm bench`).
 *   node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts [fp32|tf32|bf16]
 */
import { spawnSync } from "node:child_process";
import { cudaBackend, parsePrecision } from "@loop/cuda";
import { startCudaDevice } from "@loop/cuda/node";
import { flopsPerToken, LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";

const precision = parsePrecision(process.argv[2] ?? "bf16");
const B = 16;
const T = 1024;
const V = 50280;
const SSM = { d_state: 128, headdim: 64, chunk_size: 64 };
const ATTN = { n_heads: 12, n_kv_heads: 12 };
const MODELS: [string, ModelConfigInput][] = [
  [
    "mamba2 d768 24x1",
    { vocab_size: V, d_model: 768, n_layers: 24, n_loops: 1, backbone: "mamba", ssm: SSM },
  ],
  [
    "mamba2 d768 6x4",
    { vocab_size: V, d_model: 768, n_layers: 6, n_loops: 4, backbone: "mamba", ssm: SSM },
  ],
  [
    "hybrid d768 6x4 (attention at layer 3)",
    {
      vocab_size: V,
      d_model: 768,
      n_layers: 6,
      n_loops: 4,
      backbone: "hybrid",
      attn_layers: [3],
      ssm: SSM,
      attention: ATTN,
    },
  ],
];

/** The same model in PyTorch on the GPU: its median step seconds, or why not. */
function torchStep(name: string, cfg: ReturnType<typeof parseConfig>): number | string {
  const config = {
    name,
    backbone: cfg.backbone,
    d_model: cfg.d_model,
    n_layers: cfg.n_layers,
    n_loops: cfg.n_loops,
    d_state: cfg.ssm.d_state,
    headdim: cfg.ssm.headdim,
    vocab: cfg.vocab_size,
    batch: B,
    seq: T,
    attn_layers: cfg.attn_layers ?? [],
    heads: cfg.attention.n_heads,
  };
  const args = {
    configs: [config],
    chunk: cfg.ssm.chunk_size,
    threads: [1],
    warmup: 2,
    reps: 5,
    device: "cuda",
    ...(precision === "bf16" ? { autocast: "bf16" } : {}),
  };
  const r = spawnSync("python3", ["benchmarks/torch/model.py", JSON.stringify(args)], {
    encoding: "utf8",
  });
  if (r.status !== 0) return (r.stderr || String(r.error)).trim().split("\n").pop() ?? "failed";
  return (JSON.parse(r.stdout) as { results: { seconds: number }[] }).results[0]!.seconds;
}

const started = await startCudaDevice();
if (!started.ok) {
  console.error(`cuda: ${started.reason}`);
  process.exit(1);
}
console.log(`device: ${JSON.stringify(started.info)}; GEMM precision ${precision}`);
const o = resolveTrainOptions({});
for (const [name, config] of MODELS) {
  const { ops } = cudaBackend(started.device, { precision });
  const cfg = parseConfig(config);
  const model = new LoopedModel(cfg, { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, ops, o), o);
  const rng = new Rng(1);
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(cfg.vocab_size));
  const batch = { tokens, targets: tokens, shape: [B, T] as [number, number] };
  for (let s = 0; s < 3; s++) await engine.step([batch], o.lr);
  const n = 10;
  const t0 = performance.now();
  for (let s = 0; s < n; s++) await engine.step([batch], o.lr);
  const sec = (performance.now() - t0) / 1000 / n;
  engine.dispose();
  const flops = flopsPerToken(cfg, { seqLen: T }).trainPerToken * B * T;
  const torch = torchStep(name, cfg);
  const torchText =
    typeof torch === "number"
      ? `PyTorch ${(torch * 1000).toFixed(1)} ms/step (${(torch / sec).toFixed(2)}× the PyTorch time)`
      : `PyTorch: ${torch}`;
  console.log(
    `${name} ${B}x${T}: ${(sec * 1000).toFixed(1)} ms/step, ${((B * T) / sec).toFixed(0)} tokens/s, ${(flops / sec / 1e12).toFixed(2)} model TFLOP/s; ${torchText}`,
  );
}
started.device.destroy();
