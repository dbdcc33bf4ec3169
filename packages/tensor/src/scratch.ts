/**
 * Scratch memory for one training or evaluation step. Touching freshly allocated memory is
 * expensive (every new page faults; on sandboxed VMs this costs more than the arithmetic), and a
 * training step allocates the same buffers every time. Inside `withScratch(fn)`, `allocF32`
 * hands out zeroed views of pooled buffers; when the outermost scope ends they all return to
 * the pool for the next step.
 *
 * Contract: nothing allocated inside the scope may be used after it ends — return plain numbers
 * (or copies) from `fn`. Parameters, gradients of leaves and optimizer state are allocated
 * outside scopes and are unaffected.
 *
 * `withTemporaries(fn)` is the same pool for a kernel's own temporaries: what `allocF32` hands
 * out inside it returns to the pool as soon as `fn` ends, inside a step's scope or outside any,
 * so a backward pass that runs once per layer application reuses one set of buffers.
 */
const MIN_POOLED = 1024;
const hasShared = typeof SharedArrayBuffer !== "undefined";

type Buf = ArrayBuffer | SharedArrayBuffer;

let depth = 0;
const free = new Map<number, Buf[]>();
let used: [number, Buf][] = [];
let pooledBytes = 0;

function bucketOf(n: number): number {
  return Math.max(10, 32 - Math.clz32(n - 1));
}

/**
 * A pooled buffer of n floats when a scope is open, else null; zeroed unless `zero` is false
 * (for outputs a kernel overwrites completely: the fill is a full pass over memory).
 */
export function scratchAlloc(n: number, zero = true): Float32Array | null {
  if (depth === 0 || n < MIN_POOLED) return null;
  const b = bucketOf(n);
  const list = free.get(b);
  let buf = list?.pop();
  if (buf === undefined) {
    const bytes = 4 * 2 ** b;
    buf = hasShared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
    pooledBytes += bytes;
    used.push([b, buf]);
    return new Float32Array(buf, 0, n);
  }
  used.push([b, buf]);
  const a = new Float32Array(buf, 0, n);
  if (zero) a.fill(0);
  return a;
}

/** Run `fn` with pooled scratch memory (see the module comment for the contract). */
export function withScratch<T>(fn: () => T): T {
  depth++;
  try {
    return fn();
  } finally {
    depth--;
    if (depth === 0) {
      for (const [b, buf] of used) {
        let list = free.get(b);
        if (!list) free.set(b, (list = []));
        list.push(buf);
      }
      used = [];
    }
  }
}

/**
 * Run `fn` with pooled temporaries (see the module comment): everything `allocF32` hands out
 * inside it goes back to the pool when it ends, so nothing allocated inside may outlive `fn`.
 */
export function withTemporaries<T>(fn: () => T): T {
  const mark = used.length;
  depth++;
  try {
    return fn();
  } finally {
    depth--;
    for (const [b, buf] of used.splice(mark)) {
      let list = free.get(b);
      if (!list) free.set(b, (list = []));
      list.push(buf);
    }
  }
}

/** Bytes held by the pool (for memory reports). */
export function scratchBytes(): number {
  return pooledBytes;
}

/** Drop every pooled buffer (outside any scope). */
export function releaseScratch(): void {
  if (depth > 0) throw new Error("releaseScratch: cannot release inside withScratch");
  free.clear();
  pooledBytes = 0;
}
