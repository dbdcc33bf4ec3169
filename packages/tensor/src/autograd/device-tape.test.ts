import { describe, expect, it } from "vitest";
import { DeviceTape } from "./device-tape.js";
import type { DeviceNode, TapeMemory, TapeTensor } from "./device-tape-types.js";

/** A host tensor standing for a device one: values, a block (or a view of one), tape fields. */
let ids = 1;
class Fake implements TapeTensor<Fake> {
  readonly id = ids++;
  readonly size: number;
  requiresGrad = false;
  node: DeviceNode<Fake> | null = null;
  grad: Fake | null = null;
  gradLive = false;
  released = false;
  constructor(
    readonly shape: readonly number[],
    readonly data: Float64Array,
    readonly persistent = false,
    readonly base: Fake | null = null,
  ) {
    this.size = shape.reduce((a, b) => a * b, 1);
  }
  get values(): number[] {
    if (this.released || this.base?.released) throw new Error(`tensor ${this.id} was released`);
    return [...this.data];
  }
}

/** A fake backend's memory: counts launches and disposals, tracks the blocks alive. */
function fakeMemory() {
  const alive = new Set<Fake>();
  const made: Fake[] = [];
  const counts = { copy: 0, addInto: 0, add: 0, dispose: 0, peak: 0, releaseSince: 0 };
  const make = (shape: readonly number[], persistent = false, data?: Float64Array) => {
    const t = new Fake(
      shape,
      data ?? new Float64Array(shape.reduce((a, b) => a * b, 1)),
      persistent,
    );
    alive.add(t);
    made.push(t);
    counts.peak = Math.max(counts.peak, alive.size);
    return t;
  };
  const mem: TapeMemory<Fake> = {
    nextId: () => ids,
    empty: (like, persistent) => make(like.shape, persistent),
    copyInto: (dst, src) => {
      counts.copy++;
      dst.data.set(src.values);
    },
    addInto: (dst, src) => {
      counts.addInto++;
      const s = src.values;
      dst.data.forEach((v, i) => {
        dst.data[i] = v + s[i]!;
      });
    },
    add: (a, b) => {
      counts.add++;
      const bv = b.values;
      return make(
        a.shape,
        false,
        Float64Array.from(a.values, (v, i) => v + bv[i]!),
      );
    },
    dispose: (t) => {
      if (t.base) return;
      counts.dispose++;
      t.released = true;
      alive.delete(t);
    },
    gathers: (t) => t.persistent,
    releaseSince: (mark, keep) => {
      counts.releaseSince++;
      const kept = new Set(keep.map((k) => k.base ?? k));
      for (const t of alive)
        if (t.id >= mark && !t.persistent && !kept.has(t)) {
          t.released = true;
          alive.delete(t);
        }
    },
  };
  return { mem, counts, alive, make, made };
}

type Env = ReturnType<typeof fakeMemory> & { tape: DeviceTape<Fake> };

function env(keepList = false): Env {
  const m = fakeMemory();
  return { ...m, tape: new DeviceTape(m.mem, keepList) };
}

const param = (e: Env, values: number[]) => {
  const t = e.make([values.length], true, Float64Array.from(values));
  t.requiresGrad = true;
  return t;
};

/** c·a (a fresh gradient, or written into the tape's target for a when it offers one). */
function scale(e: Env, a: Fake, c: number, useTarget = false): Fake {
  const y = e.make(
    a.shape,
    false,
    Float64Array.from(a.values, (v) => c * v),
  );
  e.tape.record("scale", [a], [y], ([g]) => {
    const t = useTarget ? e.tape.gradTarget(a) : null;
    const gv = g!.values;
    if (t) {
      t.out.data.forEach((v, i) => {
        t.out.data[i] = (t.acc ? v : 0) + c * gv[i]!;
      });
      // an intermediate's running sum goes back as its gradient; a leaf's block needs nothing
      return [a.node ? t.out : null];
    }
    return [
      e.make(
        a.shape,
        false,
        Float64Array.from(gv, (v) => c * v),
      ),
    ];
  });
  return y;
}

/** a + b (passes its gradient through to both). */
function add(e: Env, a: Fake, b: Fake): Fake {
  const bv = b.values;
  const y = e.make(
    a.shape,
    false,
    Float64Array.from(a.values, (v, i) => v + bv[i]!),
  );
  e.tape.record("add", [a, b], [y], ([g]) => [g, g]);
  return y;
}

/** a·b elementwise. */
function mul(e: Env, a: Fake, b: Fake): Fake {
  const av = a.values;
  const bv = b.values;
  const y = e.make(
    a.shape,
    false,
    Float64Array.from(av, (v, i) => v * bv[i]!),
  );
  e.tape.record("mul", [a, b], [y], ([g]) => {
    const gv = g!.values;
    return [
      a.requiresGrad
        ? e.make(
            a.shape,
            false,
            Float64Array.from(gv, (v, i) => v * bv[i]!),
          )
        : null,
      b.requiresGrad
        ? e.make(
            b.shape,
            false,
            Float64Array.from(gv, (v, i) => v * av[i]!),
          )
        : null,
    ];
  });
  return y;
}

/** The sum of a's entries, one element. */
function sum(e: Env, a: Fake): Fake {
  const y = e.make([1], false, Float64Array.of(a.values.reduce((s, v) => s + v, 0)));
  e.tape.record("sum", [a], [y], ([g]) => [
    e.make(a.shape, false, new Float64Array(a.size).fill(g!.values[0]!)),
  ]);
  return y;
}

const seed = (e: Env) => () => e.make([1], false, Float64Array.of(1));

describe("DeviceTape: the device backends' tape and backward walk", () => {
  for (const keepList of [false, true])
    it(`sums the gradients of a tensor several ops read (${keepList ? "recorded order" : "found from the root"})`, () => {
      const e = env(keepList);
      const w = param(e, [1, 2, 3]);
      const h = scale(e, w, 2); // an intermediate read by three ops
      const loss = sum(e, add(e, add(e, mul(e, h, h), scale(e, h, 3)), h));
      e.tape.backward(loss, seed(e));
      // d/dh (h² + 3h + h) = 2h + 4 = 4w + 4; dw = 2·that
      expect(w.grad!.values).toEqual([16, 24, 32]);
      expect(w.gradLive).toBe(true);
      expect(e.counts.add).toBeGreaterThan(0);
      expect(e.tape.nodes).toEqual([]);
    });

  it("adds in place into the running sum an op asks for (gradTarget), with no summing launch", () => {
    const e = env();
    const w = param(e, [1, 2]);
    const h = scale(e, w, 1);
    const a = scale(e, h, 2, true);
    const b = scale(e, h, 5, true);
    const loss = sum(e, add(e, a, b));
    e.tape.backward(loss, seed(e));
    expect(w.grad!.values).toEqual([7, 7]);
    expect(e.counts.add).toBe(0);
  });

  it("never adds in place into a block an op handed to two inputs", () => {
    const e = env();
    const w = param(e, [1, 2]);
    const a = scale(e, w, 1);
    const b = scale(e, w, 1);
    // earlier readers of a and b ask to add into their running sums (their backward runs later)
    const ra = scale(e, a, 10, true);
    const rb = scale(e, b, 100, true);
    // one fresh block returned as the gradient of both inputs
    const y = e.make(
      [2],
      false,
      Float64Array.from(a.values, (v, i) => v + b.values[i]!),
    );
    e.tape.record("both", [a, b], [y], ([g]) => {
      const shared = e.make([2], false, Float64Array.from(g!.values));
      return [shared, shared];
    });
    const loss = sum(e, add(e, add(e, ra, rb), y));
    e.tape.backward(loss, seed(e));
    // d/dw = (1 + 10) + (1 + 100)
    expect(w.grad!.values).toEqual([112, 112]);
  });

  it("gives each intermediate gradient back once consumed: a deep chain holds a frontier", () => {
    const e = env();
    const w = param(e, [1, 1, 1, 1]);
    let h = w;
    for (let i = 0; i < 40; i++) h = scale(e, h, 1.01);
    const loss = sum(e, h);
    const before = e.alive.size;
    const disposedBefore = e.counts.dispose;
    e.tape.backward(loss, seed(e));
    // one gradient per node (40 scales, the sum, the seed), each given back after its use
    expect(e.counts.dispose - disposedBefore).toBe(42);
    // at no time more than a couple of gradient blocks beside the forward (and w's gradient)
    expect(e.counts.peak - before).toBeLessThanOrEqual(3);
    expect(w.grad!.values[0]).toBeCloseTo(1.01 ** 40, 10);
  });

  it("keeps a gradient that a view of it is still held through, and never frees older tensors", () => {
    const e = env();
    const w = param(e, [1, 2]);
    const h = scale(e, w, 3);
    // an op whose backward hands one block to its input and keeps a view of it in another path
    const y = e.make([2], false, Float64Array.from(h.values));
    const z = e.make([2], false, Float64Array.from(h.values));
    e.tape.record("fork", [h], [y, z], ([gy, gz]) => {
      const g = e.make(
        [2],
        false,
        Float64Array.from(gy!.values, (v, i) => v + gz!.values[i]!),
      );
      return [new Fake([2], g.data, false, g)]; // a view: its block stays until the view is consumed
    });
    const loss = sum(e, add(e, y, z));
    const forward = [...e.alive].filter((t) => !t.persistent);
    e.tape.backward(loss, seed(e));
    expect(w.grad!.values).toEqual([6, 6]);
    for (const t of forward) expect(t.released).toBe(false);
  });

  it("gathers a leaf's gradient: copied first, added after, overwritten after zeroGrads", () => {
    const e = env();
    const w = param(e, [1, 2]);
    e.tape.backward(sum(e, scale(e, w, 2)), seed(e));
    const block = w.grad;
    expect(block!.values).toEqual([2, 2]);
    e.tape.backward(sum(e, scale(e, w, 3)), seed(e));
    expect(w.grad!.values).toEqual([5, 5]);
    expect(e.tape.hasGrad(w)).toBe(true);
    e.tape.zeroGrads([w]);
    expect(e.tape.hasGrad(w)).toBe(false);
    e.tape.backward(sum(e, scale(e, w, 4)), seed(e));
    expect(w.grad).toBe(block); // the block stays across steps
    expect(w.grad!.values).toEqual([4, 4]);
    e.tape.zeroGrads([w], true);
    expect(w.grad).toBeNull();
    expect(block!.released).toBe(true);
  });

  it("leafTarget: a trainable leaf's block, overwritten first and added to after", () => {
    const e = env();
    const w = param(e, [1]);
    const frozen = e.make([1], false, Float64Array.of(1));
    frozen.requiresGrad = true;
    expect(e.tape.leafTarget(frozen)).toBeNull(); // not a gathering leaf
    const first = e.tape.leafTarget(w)!;
    expect(first.acc).toBe(false);
    expect(e.tape.leafTarget(w)).toEqual({ out: first.out, acc: true });
    // ops writing there return null: a walk adds nothing more
    const loss = sum(e, scale(e, w, 7, true));
    e.tape.zeroGrads([w]);
    e.tape.backward(loss, seed(e));
    expect(w.grad!.values).toEqual([7]);
  });

  it("ends the walk at `wrt`: their gradients are returned, not gathered", () => {
    const e = env();
    const w = param(e, [2, 3]);
    const x = e.make([2], false, Float64Array.of(1, 1));
    x.requiresGrad = true;
    const y = mul(e, x, w);
    const g = e.make([2], false, Float64Array.of(1, 10));
    const [gx] = e.tape.backward(y, g, { wrt: [x] });
    expect(gx!.values).toEqual([2, 30]);
    expect(x.grad).toBeNull();
    expect(w.grad!.values).toEqual([1, 10]);
  });

  it("records nothing without recording or without an input that needs a gradient", () => {
    const e = env(true);
    const w = param(e, [1]);
    const c = e.make([1], false, Float64Array.of(2));
    const y = e.tape.withRecording(false, () => scale(e, w, 2));
    expect(y.node).toBeNull();
    expect(y.requiresGrad).toBe(false);
    expect(e.tape.recording).toBe(true);
    expect(scale(e, c, 2).node).toBeNull();
    expect(e.tape.nodes).toEqual([]);
    expect(scale(e, w, 2).node?.name).toBe("scale");
    expect(e.tape.nodes.length).toBe(1);
  });

  it("releaseScratch: what a node's backward made for itself goes back after it", () => {
    const e = env();
    const w = param(e, [1, 2]);
    const y = e.make([2], false, Float64Array.from(w.values));
    let scratch: Fake | null = null;
    e.tape.record("with-scratch", [w], [y], ([g]) => {
      scratch = e.make([64], false);
      return [e.make([2], false, Float64Array.from(g!.values))];
    });
    e.tape.backward(sum(e, y), seed(e), { releaseScratch: true });
    expect(scratch!.released).toBe(true);
    expect(w.grad!.values).toEqual([1, 1]);
  });

  it("checkpoint: the same gradients as the unwrapped graph, the intermediates not kept", () => {
    const run = (wrapped: boolean) => {
      const e = env();
      const w = param(e, [0.5, -1.5]);
      const x0 = param(e, [2, 3]);
      const x = scale(e, x0, 1);
      const fn = (v: Fake) => mul(e, scale(e, mul(e, v, w), 3), v);
      const standIn = (v: Fake) => new Fake(v.shape, v.data, v.persistent, v.base ?? v);
      const y = wrapped ? e.tape.checkpoint(fn, x, [w], standIn, { releaseScratch: true }) : fn(x);
      const kept = e.alive.size;
      e.tape.backward(sum(e, y), seed(e), { releaseScratch: true });
      return { w: w.grad!.values, x0: x0.grad!.values, kept };
    };
    const plain = run(false);
    const ckpt = run(true);
    expect(ckpt.w).toEqual(plain.w);
    expect(ckpt.x0).toEqual(plain.x0);
    expect(ckpt.kept).toBeLessThan(plain.kept);
  });
});
