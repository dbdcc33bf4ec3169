/*
 * Dynamic loss scaling for mixed-precision training (TrainOptions.precision "mixed"): the
 * backward pass is seeded with the loss weight × `scale`, so that gradients stored in f16 on the
 * way (GEMM operands) stay above f16's smallest normal (6.1e-5); the f32 gradients are divided
 * by `scale` again before the norm, the clip and the update. The scale is a power of two, so the
 * division is exact and, where nothing under- or overflows, the update does not depend on it.
 *
 * When a step's gradients overflow (a non-finite norm with a finite loss), the scale halves and
 * the step is redone on the same batches (the optimiser never sees the overflowed gradients);
 * after `interval` steps in a row without one it doubles, up to `max`. At `min` an overflow is
 * reported as it is (the Trainer stops with its non-finite error, as in fp32).
 */

/**
 * Dynamic loss scaling: the starting scale, how many overflow-free steps double it, and its bounds.
 */
export interface LossScaleOptions {
  /** Starting scale (default 2^14). */
  init: number;
  /** Steps without an overflow before the scale doubles (default 500). */
  interval: number;
  /** Bounds of the scale (default 1 and 2^24). */
  min: number;
  max: number;
}

/**
 * The default dynamic loss scale (start 2^14, doubling every 500 overflow-free steps, within [1,
 * 2^24]).
 */
export const DEFAULT_LOSS_SCALE: LossScaleOptions = {
  init: 2 ** 14,
  interval: 500,
  min: 1,
  max: 2 ** 24,
};

const isPowerOfTwo = (x: number) => x > 0 && Number.isInteger(Math.log2(x));

/** What a checkpoint keeps of a loss scale (trainer.json "loss_scale"). */
export interface LossScaleState {
  scale: number;
  /** Clean steps counted toward the next doubling. */
  good: number;
}

/**
 * The dynamic loss scale of mixed-precision training: halved (and the step redone) on an overflow,
 * doubled after `interval` good steps.
 */
export class DynamicLossScale {
  /** The scale's start, growth interval and bounds. */
  readonly opts: LossScaleOptions;
  /** The current loss scale. */
  scale: number;
  /** Steps since the last overflow or growth. */
  private good = 0;
  /** Overflows seen (each a redone step). */
  overflows = 0;

  constructor(opts: Partial<LossScaleOptions> = {}) {
    this.opts = { ...DEFAULT_LOSS_SCALE, ...opts };
    const { init, min, max, interval } = this.opts;
    for (const [k, v] of [
      ["init", init],
      ["min", min],
      ["max", max],
    ] as const)
      if (!isPowerOfTwo(v)) throw new Error(`loss scale: ${k} must be a power of two, got ${v}`);
    if (!(min <= init && init <= max))
      throw new Error(`loss scale: need min ≤ init ≤ max, got ${min}, ${init}, ${max}`);
    if (!(Number.isInteger(interval) && interval >= 1))
      throw new Error(`loss scale: interval must be an integer ≥ 1, got ${interval}`);
    this.scale = init;
  }

  /** A step's gradients were finite: count it, doubling the scale after `interval` in a row. */
  finite(): void {
    this.good++;
    if (this.good >= this.opts.interval) {
      this.good = 0;
      this.scale = Math.min(this.opts.max, this.scale * 2);
    }
  }

  /** The scale and its count of clean steps, for a checkpoint. */
  state(): LossScaleState {
    return { scale: this.scale, good: this.good };
  }

  /** Continue from a checkpoint's state: a resumed run goes on as an uninterrupted one would. */
  restore(s: LossScaleState): void {
    const { min, max, interval } = this.opts;
    if (!(isPowerOfTwo(s.scale) && min <= s.scale && s.scale <= max))
      throw new Error(`loss scale: a power of two in [${min}, ${max}] expected, got ${s.scale}`);
    if (!(Number.isInteger(s.good) && s.good >= 0 && s.good < interval))
      throw new Error(
        `loss scale: clean steps must be an integer in [0, ${interval}), got ${s.good}`,
      );
    this.scale = s.scale;
    this.good = s.good;
  }

  /** A step's gradients overflowed: halve the scale; false when already at `min` (give up). */
  overflow(): boolean {
    this.good = 0;
    if (this.scale <= this.opts.min) return false;
    this.overflows++;
    this.scale /= 2;
    return true;
  }
}
