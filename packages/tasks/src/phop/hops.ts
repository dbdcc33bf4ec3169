/*
 * p-hop induction (docs/tasks.md "p-hop induction"), positions 1-based as there:
 * `find_1(i) = max({0} ∪ {k ≤ i : v_{k−1} = v_i})` — jump to just after the most recent earlier
 * occurrence of v_i — and `find_p` applies it p times. The answer is `v_{find_p(n)}`, undefined
 * when a hop reaches 0.
 */

/** Symbol names in alphabet order: "a"…"z", then "aa", "ab", … (bijective base 26). */
export function alphabetSymbols(size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < size; i++) {
    let n = i + 1;
    let s = "";
    while (n > 0) {
      const r = (n - 1) % 26;
      s = String.fromCharCode(97 + r) + s;
      n = Math.floor((n - 1) / 26);
    }
    out.push(s);
  }
  return out;
}

/** prev[i] (1-based i) = the most recent j < i with v_j = v_i, or 0. */
function previousOccurrences(seq: ArrayLike<number>, alphabet: number): Int32Array {
  const prev = new Int32Array(seq.length + 1);
  const last = new Int32Array(alphabet);
  for (let i = 1; i <= seq.length; i++) {
    const v = seq[i - 1]!;
    prev[i] = last[v]!;
    last[v] = i;
  }
  return prev;
}

/** Follow `hops` hops from position `pos` through `prev`; 0 when a hop has nowhere to go. */
function follow(prev: Int32Array, pos: number, hops: number): number {
  for (let h = 0; h < hops; h++) {
    const j = prev[pos]!;
    if (j === 0) return 0;
    pos = j + 1;
  }
  return pos;
}

/**
 * `find_p(n)` for the sequence `seq` = v_1..v_n (stored 0-based): the 1-based position whose
 * symbol is the answer, or 0 when a hop has no earlier occurrence to jump to.
 * O(n + alphabet) with a last-occurrence table.
 */
export function pHopPosition(seq: ArrayLike<number>, hops: number, alphabet: number): number {
  return follow(previousOccurrences(seq, alphabet), seq.length, hops);
}

/**
 * `find_p(i)` for every prefix end i = 1..n at once (entry i − 1; 0 where undefined): the p-hop
 * answer position of v_1..v_i. O(n·p) with the same last-occurrence table.
 */
export function pHopPositionsAll(
  seq: ArrayLike<number>,
  hops: number,
  alphabet: number,
): Int32Array {
  const prev = previousOccurrences(seq, alphabet);
  const out = new Int32Array(seq.length);
  for (let i = 1; i <= seq.length; i++) out[i - 1] = follow(prev, i, hops);
  return out;
}
