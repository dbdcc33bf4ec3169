import { describe, expect, it } from "vitest";
import { fitBatch, HEADROOM, stepBytes } from "./fit-batch.js";

const SMALL = {
  vocab_size: 64,
  d_model: 32,
  n_layers: 2,
  n_loops: 2,
  backbone: "mamba" as const,
  ssm: { d_state: 16, headdim: 16, chunk_size: 16 },
};

describe("the batch that fits a GPU's memory, counted on the recording device", () => {
  it("a step's bytes grow with the batch, and are the same when counted again", async () => {
    const one = await stepBytes(SMALL, "bf16", 1, 64);
    const four = await stepBytes(SMALL, "bf16", 4, 64);
    expect(one).toBeGreaterThan(0);
    expect(four).toBeGreaterThan(one);
    expect(await stepBytes(SMALL, "bf16", 4, 64)).toBe(four);
  });

  it("takes the largest batch within the memory less the headroom, or says none fits", async () => {
    const two = await stepBytes(SMALL, "fp32", 2, 64);
    const four = await stepBytes(SMALL, "fp32", 4, 64);
    expect(await fitBatch(SMALL, "fp32", two + HEADROOM, [4, 2, 1], 64)).toEqual({
      batch: 2,
      needBytes: two,
    });
    expect(await fitBatch(SMALL, "fp32", four + HEADROOM, [1, 4, 2], 64)).toEqual({
      batch: 4,
      needBytes: four,
    });
    const none = await fitBatch(SMALL, "fp32", HEADROOM, [2, 1], 64);
    expect(none.batch).toBeNull();
    if (none.batch === null)
      expect(none.why).toMatch(/^even batch 1 needs [\d.]+ GiB of the 3\.0$/);
  });
});
