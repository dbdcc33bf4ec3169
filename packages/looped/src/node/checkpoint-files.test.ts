import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mamba2Mixer } from "@loop/ssm-kernels";
import { encodeSafetensors, intTensor, noGrad } from "@loop/tensor";
import { readSafetensorsFile, writeSafetensorsFile } from "@loop/tensor/node";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../config.js";
import { mamba2Config } from "../mixer-configs.js";
import type { MixerFactory } from "../mixer-factory.js";
import { LoopedModel } from "../model.js";
import { stateDict } from "../state-dict.js";
import { loadCheckpoint, saveCheckpoint } from "./checkpoint-files.js";

const cfg = parseConfig({
  backbone: "mamba",
  vocab_size: 9,
  d_model: 16,
  n_layers: 1,
  n_loops: 2,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
});
const tmp = () => mkdtempSync(join(tmpdir(), "ckpt-"));

function toBf16(x: Float32Array): Uint8Array {
  const out = new Uint8Array(x.length * 2);
  const dv = new DataView(out.buffer);
  const f = new DataView(new ArrayBuffer(4));
  x.forEach((v, i) => {
    f.setFloat32(0, v, true);
    dv.setUint16(2 * i, f.getUint32(0, true) >>> 16, true);
  });
  return out;
}

describe("checkpoints", () => {
  it("round-trip exactly, written atomically (no temporary files left)", () => {
    const dir = tmp();
    const m = new LoopedModel(cfg, { seed: 1 });
    saveCheckpoint(dir, m);
    expect(readdirSync(dir).sort()).toEqual(["config.json", "model.safetensors"]);
    const back = loadCheckpoint(dir);
    expect(back.config).toEqual(cfg);
    for (const [k, v] of stateDict(back))
      expect(Array.from(v.data)).toEqual(Array.from(stateDict(m).get(k)!.data));
  });
  it("lists missing, unexpected and wrongly shaped tensors by name in one error", () => {
    const dir = tmp();
    saveCheckpoint(dir, new LoopedModel(cfg));
    const t = readSafetensorsFile(join(dir, "model.safetensors")).tensors;
    t.delete("backbone.layers.0.mixer.D");
    t.set("backbone.layers.0.mixer.bogus", { data: new Float32Array(1), shape: [1] });
    t.set("backbone.norm_f.weight", { data: new Float32Array(3), shape: [3] });
    writeSafetensorsFile(join(dir, "model.safetensors"), t);
    expect(() => loadCheckpoint(dir)).toThrow(
      /missing: backbone.layers.0.mixer.D; unexpected: backbone.layers.0.mixer.bogus; wrong shape: backbone.norm_f.weight \(expected \[16\], got \[3\]\)/,
    );
  });
  it("reports truncated weights, bad config JSON and bad config values", () => {
    const dir = tmp();
    saveCheckpoint(dir, new LoopedModel(cfg));
    const w = readFileSync(join(dir, "model.safetensors"));
    writeFileSync(join(dir, "model.safetensors"), w.subarray(0, w.length - 10));
    expect(() => loadCheckpoint(dir)).toThrow(/truncated/);
    writeFileSync(join(dir, "config.json"), "{oops");
    expect(() => loadCheckpoint(dir)).toThrow(/config.json is not valid JSON/);
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...cfg, n_loops: 0 }));
    expect(() => loadCheckpoint(dir)).toThrow(/n_loops must be a positive integer/);
    expect(() => loadCheckpoint(join(dir, "nope"))).toThrow(/does not exist/);
  });
  it("loads BF16 weights (widened) and a Hugging Face Mamba2ForCausalLM folder as a 1-loop model", () => {
    const m = new LoopedModel({ ...cfg, n_loops: 1, tie_embeddings: false }, { seed: 2 });
    const sd = stateDict(m);
    // Write a BF16 safetensors by hand, with HF's config.json and an untied lm_head.
    const header: Record<string, unknown> = {};
    const chunks: Uint8Array[] = [];
    let off = 0;
    for (const [k, v] of sd) {
      const b = toBf16(v.data);
      header[k] = { dtype: "BF16", shape: v.shape, data_offsets: [off, off + b.length] };
      chunks.push(b);
      off += b.length;
    }
    const h = new TextEncoder().encode(JSON.stringify(header));
    const file = new Uint8Array(8 + h.length + off);
    new DataView(file.buffer).setBigUint64(0, BigInt(h.length), true);
    file.set(h, 8);
    let p = 8 + h.length;
    for (const c of chunks) {
      file.set(c, p);
      p += c.length;
    }
    const dir = tmp();
    writeFileSync(join(dir, "model.safetensors"), file);
    writeFileSync(
      join(dir, "config.json"),
      JSON.stringify({
        model_type: "mamba2",
        architectures: ["Mamba2ForCausalLM"],
        hidden_size: 16,
        num_hidden_layers: 1,
        vocab_size: 9,
        state_size: 4,
        head_dim: 8,
        num_heads: 4,
        expand: 2,
        n_groups: 1,
        conv_kernel: 4,
        chunk_size: 4,
        layer_norm_epsilon: 1e-5,
        tie_word_embeddings: false,
        use_bias: false,
        use_conv_bias: true,
      }),
    );
    const hf = loadCheckpoint(dir);
    expect(hf.config.n_loops).toBe(1);
    expect(hf.config.tie_embeddings).toBe(false);
    const w = stateDict(hf).get("backbone.layers.0.mixer.in_proj.weight")!.data;
    const orig = sd.get("backbone.layers.0.mixer.in_proj.weight")!.data;
    for (let i = 0; i < 20; i++)
      expect(Math.abs(w[i]! - orig[i]!)).toBeLessThanOrEqual(Math.abs(orig[i]!) / 128);
    const logits = noGrad(() => hf.forward(intTensor([1, 2, 3], [1, 3]))).logits[0]!;
    expect(logits.data.every(Number.isFinite)).toBe(true);
    expect(existsSync(join(dir, "model.safetensors"))).toBe(true);
    expect(encodeSafetensors(sd).length).toBeGreaterThan(0);
  });
});

describe("a checkpoint of a model with a custom mixer", () => {
  /** The built-in Mamba-2 mixer under another class name: a custom mixer with known weights. */
  class Renamed extends Mamba2Mixer {}
  const mixer: MixerFactory = ({ config, rng, nLayers }) =>
    new Renamed(mamba2Config(config), { rng, nLayers });

  it("names the mixer in config.json, and a load without its factory says which it needs", () => {
    const dir = tmp();
    const model = new LoopedModel(cfg, { seed: 3, mixer });
    saveCheckpoint(dir, model);
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).mixer).toBe("Renamed");
    expect(() => loadCheckpoint(dir)).toThrow(
      'LoopedModel: config.mixer is "Renamed": its layers run that custom mixer; pass ModelOptions.mixer, the factory that builds it',
    );
    const back = loadCheckpoint(dir, { mixer });
    expect(back.config).toEqual(model.config);
    const ids = intTensor([1, 2, 3], [1, 3]);
    const a = noGrad(() => model.forward(ids, { steps: "last" })).logits[0]!.data;
    const b = noGrad(() => back.forward(ids, { steps: "last" })).logits[0]!.data;
    expect(b).toEqual(a);
  });
});
