/*
 * Weights ↔ named arrays (docs/model.md §6 names). Loading is strict: every missing, unexpected and
 * wrongly shaped tensor is listed by name in one error.
 */
import { type NamedArray, shapeStr } from "@loop/tensor";
import type { LoopedModel } from "./model.js";

/** The model's weights by docs/model.md §6 name (views of the live data, not copies). */
export function stateDict(model: LoopedModel): Map<string, NamedArray> {
  return new Map(
    model.parameters().map((p) => [p.name, { data: p.tensor.data, shape: [...p.tensor.shape] }]),
  );
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Copy `tensors` into the model. With a tied head, an `lm_head.weight` equal to the embedding
 * (as some exporters write it) is accepted and ignored.
 */
export function loadStateDict(
  model: LoopedModel,
  tensors: Map<string, NamedArray>,
  source = "checkpoint",
): void {
  const params = model.parameters();
  const known = new Set(params.map((p) => p.name));
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const p of params) {
    const t = tensors.get(p.name);
    if (!t) missing.push(p.name);
    else if (shapeStr(t.shape) !== shapeStr(p.tensor.shape)) {
      wrong.push(`${p.name} (expected ${shapeStr(p.tensor.shape)}, got ${shapeStr(t.shape)})`);
    }
  }
  const unexpected: string[] = [];
  for (const [name, t] of tensors) {
    if (known.has(name)) continue;
    const emb = tensors.get("backbone.embeddings.weight");
    if (
      name === "lm_head.weight" &&
      model.config.tie_embeddings &&
      emb &&
      sameValues(t.data, emb.data)
    )
      continue;
    unexpected.push(name);
  }
  // NaN or Inf weights would evaluate and generate "plausible" numbers; refuse them here.
  const nonFinite: string[] = [];
  for (const p of params) {
    const t = tensors.get(p.name);
    if (!t || wrong.some((w) => w.startsWith(`${p.name} `))) continue;
    const i = t.data.findIndex((v) => !Number.isFinite(v));
    if (i >= 0) nonFinite.push(`${p.name} (${t.data[i]} at index ${i})`);
  }
  const problems: string[] = [];
  if (nonFinite.length) problems.push(`non-finite values: ${nonFinite.join(", ")}`);
  if (missing.length) problems.push(`missing: ${missing.join(", ")}`);
  if (unexpected.length) problems.push(`unexpected: ${unexpected.join(", ")}`);
  if (wrong.length) problems.push(`wrong shape: ${wrong.join(", ")}`);
  if (nonFinite.length && problems.length === 1)
    throw new Error(`${source} is damaged — ${problems[0]}`);
  // weights of mixers the config does not describe: most likely saved from custom mixers
  const foreignMixers =
    unexpected.length > 0 &&
    unexpected.every((n) => /^backbone\.layers\.\d+\.mixer\./.test(n)) &&
    !model.layers.some((l) => l.customMixer);
  if (foreignMixers)
    problems.push(
      "its mixer weights are not the config's: a model saved with custom mixers (ModelOptions.mixer) loads only with the same mixer factory (loadCheckpoint(dir, { mixer }))",
    );
  if (problems.length)
    throw new Error(`${source} does not match the model config — ${problems.join("; ")}`);
  for (const p of params) p.tensor.data.set(tensors.get(p.name)!.data);
}
