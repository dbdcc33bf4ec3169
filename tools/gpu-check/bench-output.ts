/**
 * What `pnpm bench … --backend webgpu` prints, read back: the adapter, driver and fp32 peak
 * lines, the CPU, and every table (benchmarks/lib/table.ts: a header, a rule of dashes under each
 * column, rows; a title on the line before). The columns are cut where the rule's dashes are, so
 * a table with new columns (added by later work on the benchmarks) is read whole.
 */
export type Cell = string | number;

export interface BenchTable {
  /** The benchmark that printed it ("matmul"). */
  bench: string;
  title: string;
  columns: string[];
  rows: Record<string, Cell>[];
}

export interface BenchOutput {
  adapter: string | null;
  driver: string | null;
  /** The GPU's fp32 peak as the bench states it (measured by its FMA loop, or given). */
  gpuPeak: { gflops: number; source: string } | null;
  /** "AMD EPYC …; 16 cores; load average 0.42", from the bench's first line. */
  machine: string | null;
  /** The CPU's fp32 peak per thread count. */
  cpuPeaks: { threads: number; gflops: number; source: string }[];
  tables: BenchTable[];
  /** Seconds each benchmark took, as it printed. */
  tookS: Record<string, number>;
  /** Benchmarks that reported a failure. */
  failed: string[];
}

const RULE = /^-+(?: {2}-+)*$/;
const NUMBER = /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i;

const cell = (s: string): Cell => {
  const t = s.trim();
  return NUMBER.test(t) ? Number(t) : t;
};

/** Column spans [start, end) from the rule line's dash runs. */
function spans(rule: string): [number, number][] {
  return [...rule.matchAll(/-+/g)].map((m) => [m.index!, m.index! + m[0].length]);
}

export function parseBenchOutput(text: string): BenchOutput {
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  const out: BenchOutput = {
    adapter: null,
    driver: null,
    gpuPeak: null,
    machine: null,
    cpuPeaks: [],
    tables: [],
    tookS: {},
    failed: [],
  };
  let bench = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let m: RegExpMatchArray | null;
    if ((m = line.match(/^webgpu adapter: (.*)$/))) out.adapter = m[1]!;
    else if ((m = line.match(/^webgpu driver: (.*)$/))) out.driver = m[1]!;
    else if ((m = line.match(/^webgpu fp32 peak: ([\d.]+) GFLOP\/s \((.*)\)$/)))
      out.gpuPeak = { gflops: Number(m[1]), source: m[2]! };
    else if ((m = line.match(/^node \S+ · (.*)$/))) out.machine = m[1]!.replaceAll(" · ", "; ");
    else if ((m = line.match(/^fp32 peak, (\d+) thread\(s\): ([\d.]+) GFLOP\/s \((.*)\)$/)))
      out.cpuPeaks.push({ threads: Number(m[1]), gflops: Number(m[2]), source: m[3]! });
    else if ((m = line.match(/^=== (\S+)/))) bench = m[1]!;
    else if ((m = line.match(/^\((\S+) took ([\d.]+) s\)$/))) out.tookS[m[1]!] = Number(m[2]);
    else if ((m = line.match(/^benchmark (\S+) failed/))) out.failed.push(m[1]!);
    else if (RULE.test(line) && i > 0 && lines[i - 1]!.trim() !== "") {
      const cols = spans(line);
      const cut = (row: string): string[] =>
        cols.map(([start], j) =>
          row.slice(start, j + 1 < cols.length ? cols[j + 1]![0] : undefined).trim(),
        );
      const columns = cut(lines[i - 1]!);
      const rows: Record<string, Cell>[] = [];
      let j = i + 1;
      // a row has blanks in the two-space gaps before each column (a row's first cell may
      // itself start with "(", so the "(CPU: …)" line under the table is told apart by its gaps)
      const isRow = (row: string) =>
        row.trim() !== "" &&
        cols.every(([start], k) => k === 0 || row.slice(start - 2, start).trim() === "");
      for (; j < lines.length && isRow(lines[j]!); j++) {
        const cells = cut(lines[j]!);
        rows.push(Object.fromEntries(columns.map((c, k) => [c, cell(cells[k] ?? "")])));
      }
      const before = lines[i - 2]?.trim() ?? "";
      out.tables.push({ bench, title: before.startsWith("===") ? "" : before, columns, rows });
      i = j - 1;
    }
  }
  return out;
}

/** A GPU/CPU ratio column: `webgpu/native` or `webgpu/portable` (> 1: the GPU is faster). */
export const isRatioColumn = (c: string): boolean => /^webgpu\//.test(c);

/** The fastest GEMM the matmul benchmark measured: its row, GFLOP/s and share of the peak. */
export function bestGemm(
  tables: readonly BenchTable[],
): { shape: string; layout: string; gflops: number; pctPeak: number | null } | null {
  let best: { shape: string; layout: string; gflops: number; pctPeak: number | null } | null = null;
  for (const t of tables) {
    if (t.bench !== "matmul" || !t.columns.includes("webgpu GFLOP/s")) continue;
    for (const r of t.rows) {
      const g = r["webgpu GFLOP/s"];
      if (typeof g !== "number" || (best && best.gflops >= g)) continue;
      const pct = r["% GPU peak"];
      best = {
        shape: String(r[t.columns[0]!] ?? ""),
        layout: String(r.layout ?? ""),
        gflops: g,
        pctPeak: typeof pct === "number" ? pct : null,
      };
    }
  }
  return best;
}

/** The command encoding of a training step, per model configuration (bench model's columns). */
export interface DispatchFigures {
  config: string;
  dispatchesPerStep: number;
  /** Forward + backward dispatches of one Mamba-2 layer application (null: not printed). */
  mamba2PerLayerApplication: number | null;
  /** The same of one attention layer application. */
  attentionPerLayerApplication: number | null;
  bindGroupsPerStep: number | null;
  encodeUsPerDispatch: number | null;
}

/** Every row of the model benchmark's tables that counts dispatches. */
export function dispatchFigures(tables: readonly BenchTable[]): DispatchFigures[] {
  const num = (v: Cell | undefined) => (typeof v === "number" ? v : null);
  const out: DispatchFigures[] = [];
  for (const t of tables) {
    if (t.bench !== "model" || !t.columns.includes("dispatches/step")) continue;
    for (const r of t.rows) {
      const d = num(r["dispatches/step"]);
      if (d === null) continue;
      out.push({
        config: String(r[t.columns[0]!] ?? ""),
        dispatchesPerStep: d,
        mamba2PerLayerApplication: num(r["Mamba-2 disp/layer-app"]),
        attentionPerLayerApplication: num(r["attn disp/layer-app"]),
        bindGroupsPerStep: num(r["bind groups/step"]),
        encodeUsPerDispatch: num(r["µs encode/dispatch"]),
      });
    }
  }
  return out;
}
