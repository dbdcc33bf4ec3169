/**
 * Which dropped files make the checkpoint. A `looplm train` run folder holds final/ (config.json,
 * model.safetensors, vocab.json), checkpoints/step-N/ (the same plus optimizer.safetensors and
 * trainer.json) and run.json (the task). The user may drop the run folder, a checkpoint folder,
 * or the files themselves; final/ wins over the newest step-N.
 */
export interface DroppedFile<F> {
  /** Path inside the drop ("run/final/config.json"), or the bare name. */
  path: string;
  file: F;
}

export interface CheckpointPick<F> {
  config: F;
  weights: F;
  /** run.json, when the run folder (or the file) was dropped. */
  run: F | null;
  /** The folder the weights came from ("final", "step-000300", or "" for loose files). */
  folder: string;
}

const dirOf = (p: string) => p.slice(0, Math.max(0, p.lastIndexOf("/")));
const baseOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);

function rank(dir: string): number {
  const last = baseOf(dir);
  if (last === "final") return Number.MAX_SAFE_INTEGER;
  const m = /^step-(\d+)$/.exec(last);
  return m ? Number(m[1]) : -1;
}

export function pickCheckpoint<F>(files: readonly DroppedFile<F>[]): CheckpointPick<F> {
  const byDir = new Map<string, Map<string, F>>();
  for (const f of files) {
    const d = dirOf(f.path);
    if (!byDir.has(d)) byDir.set(d, new Map());
    byDir.get(d)!.set(baseOf(f.path), f.file);
  }
  const candidates = [...byDir.entries()].filter(
    ([, names]) => names.has("config.json") && names.has("model.safetensors"),
  );
  if (candidates.length === 0) {
    const names = files.map((f) => f.path).join(", ") || "nothing";
    throw new Error(
      `drop a checkpoint folder saved by looplm train (config.json + model.safetensors), or its run folder; got ${names}`,
    );
  }
  candidates.sort((a, b) => rank(b[0]) - rank(a[0]));
  const [dir, names] = candidates[0]!;
  const run = files
    .filter((f) => baseOf(f.path) === "run.json")
    .sort((a, b) => a.path.length - b.path.length)[0];
  return {
    config: names.get("config.json")!,
    weights: names.get("model.safetensors")!,
    run: run?.file ?? null,
    folder: baseOf(dir),
  };
}
