import { afterEach, describe, expect, it } from "vitest";
import { installThreadGovernor, ThreadGovernor, threadGovernor } from "./governor.js";

afterEach(() => installThreadGovernor(null));

/** Run `steps` steps whose time depends on the thread count the governor picks. */
function drive(g: ThreadGovernor, steps: number, msOn: (threads: number, step: number) => number) {
  const used: number[] = [];
  for (let s = 0; s < steps; s++) {
    const t = g.threads;
    used.push(t);
    g.afterStep(msOn(t, s));
  }
  return used;
}

describe("ThreadGovernor", () => {
  it("keeps all threads on a quiet machine, probing one thread less and less often", () => {
    const g = new ThreadGovernor({ max: 2 });
    const used = drive(g, 400, (t) => (t === 2 ? 30 : 50));
    expect(g.chosen).toBe(2);
    expect(g.decisions.every((d) => d.from === 2 && d.to === 2)).toBe(true);
    // one step suffices when it is clearly slower (50 ms > 1.5 × 30), and such a clear answer
    // backs off fast: probes 3, 16, 64, 256 steps apart
    const single = used.filter((t) => t === 1).length;
    expect(single).toBe(g.decisions.length);
    expect(g.decisions.length).toBe(4);
    // a probe that is slower but not clearly so takes its three steps
    const near = new ThreadGovernor({ max: 2 });
    const nearUsed = drive(near, 30, (t) => (t === 2 ? 30 : 40));
    expect(nearUsed.filter((t) => t === 1).length).toBe(3 * near.decisions.length);
  });

  it("moves to one thread when all threads are slower (a busy machine), and back when it is quiet", () => {
    const g = new ThreadGovernor({ max: 2 });
    const busyUntil = 300;
    const used = drive(g, 700, (t, s) =>
      s < busyUntil ? (t === 2 ? 190 : 50) : t === 2 ? 30 : 45,
    );
    const first = g.decisions.find((d) => d.to === 1)!;
    expect(first.step).toBeLessThan(30); // the first probe, after warm-up and 16 steps
    expect(used.slice(40, busyUntil).filter((t) => t === 2).length).toBeLessThan(15);
    expect(g.decisions.at(-1)!.to).toBe(2);
    expect(g.chosen).toBe(2);
    // only probes (3 steps each, 16 then 32 steps apart) run on one thread
    expect(used.slice(-50).filter((t) => t === 1).length).toBeLessThanOrEqual(6);
  });

  it("probes at once when the steps slow down after a long quiet stretch", () => {
    const g = new ThreadGovernor({ max: 2 });
    const used = drive(g, 1200, (t, s) => (s < 1000 ? (t === 2 ? 30 : 50) : t === 2 ? 190 : 50));
    // the interval had grown to 512; the slowdown at step 1000 triggers a probe within a few steps
    const sw = g.decisions.find((d) => d.to === 1)!;
    expect(sw.step).toBeGreaterThan(1000);
    expect(sw.step).toBeLessThan(1010);
    expect(g.chosen).toBe(1);
    // 190 steps: probes of all threads 16, 32, 64 steps apart
    expect(used.slice(1010).filter((t) => t === 2).length).toBeLessThanOrEqual(12);
  });

  it("needs a clear margin to switch, ignores warm-up steps, and does nothing with one thread", () => {
    const close = new ThreadGovernor({ max: 2 });
    drive(close, 200, (t) => (t === 2 ? 30 : 29)); // 1 thread only 3 % faster: noise
    expect(close.chosen).toBe(2);
    const warm = new ThreadGovernor({ max: 2, warmup: 5 });
    drive(warm, 5, () => 1000);
    expect(warm.decisions).toEqual([]);
    const one = new ThreadGovernor({ max: 1 });
    expect(drive(one, 100, () => 10).every((t) => t === 1)).toBe(true);
    expect(() => new ThreadGovernor({ max: 0 })).toThrow(/max must be an integer ≥ 1, got 0/);
  });

  it("reports switches and is installed globally", () => {
    const seen: number[] = [];
    const g = new ThreadGovernor({ max: 4, onSwitch: (d) => seen.push(d.to) });
    installThreadGovernor(g);
    expect(threadGovernor()).toBe(g);
    drive(g, 60, (t) => (t === 4 ? 100 : 20));
    expect(seen).toEqual([1]);
    installThreadGovernor(null);
    expect(threadGovernor()).toBeNull();
  });
});
