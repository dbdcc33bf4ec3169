/** Plain-text table: columns from the union of row keys, numbers right-aligned. */
export type Row = Record<string, string | number>;

export function formatTable(rows: readonly Row[]): string {
  if (rows.length === 0) return "(no rows)";
  const cols: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const cell = (v: string | number | undefined): string => (v === undefined ? "" : String(v));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const numeric = cols.map((c) =>
    rows.every((r) => r[c] === undefined || typeof r[c] === "number"),
  );
  const line = (vals: string[]): string =>
    vals
      .map((v, i) => (numeric[i] ? v.padStart(width[i]!) : v.padEnd(width[i]!)))
      .join("  ")
      .trimEnd();
  return [
    line(cols),
    line(width.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c])))),
  ].join("\n");
}
