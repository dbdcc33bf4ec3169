/**
 * Max-heap of (count, pair key) for the BPE trainer: the largest count first, ties broken by
 * the smaller key (so training is deterministic). Entries may go stale; the trainer checks.
 */
export class PairHeap {
  private counts: number[] = [];
  private keys: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  private above(i: number, j: number): boolean {
    const ci = this.counts[i]!;
    const cj = this.counts[j]!;
    return ci > cj || (ci === cj && this.keys[i]! < this.keys[j]!);
  }

  private swap(i: number, j: number): void {
    const c = this.counts[i]!;
    this.counts[i] = this.counts[j]!;
    this.counts[j] = c;
    const k = this.keys[i]!;
    this.keys[i] = this.keys[j]!;
    this.keys[j] = k;
  }

  push(count: number, key: number): void {
    this.counts.push(count);
    this.keys.push(key);
    let i = this.keys.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  /** Remove and return the top entry; undefined when empty. */
  pop(): { count: number; key: number } | undefined {
    const n = this.keys.length;
    if (n === 0) return undefined;
    const top = { count: this.counts[0]!, key: this.keys[0]! };
    const lastC = this.counts.pop()!;
    const lastK = this.keys.pop()!;
    if (n > 1) {
      this.counts[0] = lastC;
      this.keys[0] = lastK;
      let i = 0;
      const m = n - 1;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < m && this.above(l, best)) best = l;
        if (r < m && this.above(r, best)) best = r;
        if (best === i) break;
        this.swap(i, best);
        i = best;
      }
    }
    return top;
  }
}
