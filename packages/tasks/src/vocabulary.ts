/** A fixed vocabulary: token ids 0..size−1 ↔ distinct symbol strings. */
export class Vocabulary {
  /** The symbols, by id. */
  readonly symbols: readonly string[];
  private readonly ids: Map<string, number>;

  constructor(symbols: readonly string[]) {
    this.symbols = Object.freeze([...symbols]);
    this.ids = new Map();
    symbols.forEach((s, i) => {
      if (this.ids.has(s)) throw new Error(`Vocabulary: duplicate symbol "${s}" at id ${i}`);
      this.ids.set(s, i);
    });
  }

  /** The number of symbols. */
  get size(): number {
    return this.symbols.length;
  }

  /** The id of `symbol`; throws for an unknown symbol. */
  id(symbol: string): number {
    const id = this.ids.get(symbol);
    if (id === undefined) throw new Error(`Vocabulary: unknown symbol "${symbol}"`);
    return id;
  }

  /** Whether `symbol` is in the vocabulary. */
  has(symbol: string): boolean {
    return this.ids.has(symbol);
  }

  /** The symbol of `id`; throws for an id outside 0..size−1. */
  symbol(id: number): string {
    const s = this.symbols[id];
    if (!Number.isInteger(id) || s === undefined)
      throw new Error(`Vocabulary: id must be an integer in [0, ${this.size - 1}], got ${id}`);
    return s;
  }

  /** The ids of `symbols`; throws for an unknown one. */
  encode(symbols: readonly string[]): Int32Array {
    return Int32Array.from(symbols, (s) => this.id(s));
  }

  /** The symbols of `ids`; throws for an id out of range. */
  decode(ids: ArrayLike<number>): string[] {
    return Array.from(ids, (i) => this.symbol(i));
  }
}
