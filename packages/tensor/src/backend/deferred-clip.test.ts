import { describe, expect, it } from "vitest";
import { DeferredClip } from "./deferred-clip.js";

/** A fake device: tensors are named arrays; scaling is recorded. */
function fake() {
  const scaled: string[] = [];
  const released = new Set<string>();
  let copies = 0;
  const clip = new DeferredClip<string>({
    keepNorm: (norm, into) => {
      copies++;
      return into ?? `kept(${norm})`;
    },
    scale: (g, norm, maxNorm) => {
      scaled.push(`${g} by ${norm} to ${maxNorm}`);
    },
    released: (g) => released.has(g),
  });
  return { clip, scaled, released, copies: () => copies };
}

describe("DeferredClip", () => {
  it("notes clipping, hands it to the reader once, and settles what another op reads", () => {
    const f = fake();
    f.clip.note(["g1", "g2"], "n", 1);
    expect(f.scaled).toEqual([]);
    expect(f.clip.take("g1")).toEqual({ norm: "kept(n)", maxNorm: 1 });
    expect(f.clip.take("g1")).toBeNull();
    f.clip.settle("g2");
    expect(f.scaled).toEqual(["g2 by kept(n) to 1"]);
    f.clip.settle("g2");
    expect(f.scaled).toHaveLength(1);
  });

  it("applies earlier notes before a new norm replaces the kept one, reusing its tensor", () => {
    const f = fake();
    f.clip.note(["g1"], "n1", 1);
    f.clip.note(["g2"], "n2", 2);
    expect(f.scaled).toEqual(["g1 by kept(n1) to 1"]);
    expect(f.copies()).toBe(2);
    expect(f.clip.take("g2")).toEqual({ norm: "kept(n1)", maxNorm: 2 });
  });

  it("drops the notes of zeroed or released gradients", () => {
    const f = fake();
    f.clip.note(["g1", "g2"], "n", 1);
    f.clip.forget("g1");
    f.released.add("g2");
    f.clip.settleAll();
    expect(f.scaled).toEqual([]);
  });
});
