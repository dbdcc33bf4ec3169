/**
 * Time training steps on `--backend cuda` (tools/cuda-first-run.sh): for each configuration, a
 * few warm-up steps, then the mean wall time of the next ones (the engine keeps one step in
 * flight; the clock stops after the last step's read-back), printed as ms per step and tokens
 * per second with the machine's GPU, driver and precision. A first measurement for
 * benchmarks/RESULTS.md, not the paper-scale benchmark (`pnpm bench model --backend cuda`).
 *   node --import tsx --conditions=@loop/source tools/cuda-first-run/step-time.ts [fp32|tf32|bf16]
 */
import { cudaBackend, parsePrecision } from "@loop/cuda";
import { startCudaDevice } from "@loop/cuda/node";
import { LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";

const precision = parsePrecision(process.argv[2] ?? "bf16");
const SHAPES: [string, ModelConfigInput, number, number][] = [
  [
    "mamba2 d768 24x1",
    {
      vocab_size: 50280,
      d_model: 768,
      n_layers: 24,
      n_loops: 1,
      backbone: "mamba",
      ssm: { d_state: 128, headdim: 64, chunk_size: 64 },
    },
    16,
    1024,
  ],
  [
    "mamba2 d768 6x4",
    {
      vocab_size: 50280,
      d_model: 768,
      n_layers: 6,
      n_loops: 4,
      backbone: "mamba",
      ssm: { d_state: 128, headdim: 64, chunk_size: 64 },
    },
    16,
    1024,
  ],
];

const started = await startCudaDevice();
if (!started.ok) {
  console.error(`cuda: ${started.reason}`);
  process.exit(1);
}
console.log(`device: ${JSON.stringify(started.info)} precision ${precision}`);
const o = resolveTrainOptions({});
for (const [name, config, B, T] of SHAPES) {
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
  const ms = (performance.now() - t0) / n;
  console.log(
    `${name} B${B} T${T}: ${ms.toFixed(1)} ms/step, ${((B * T) / (ms / 1000)).toFixed(0)} tokens/s`,
  );
  engine.dispose();
}
started.device.destroy();
