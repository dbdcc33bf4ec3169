import { describe, expect, it } from "vitest";
import { comparisonTable, formatMetric } from "./table.js";

const rows = [
  { label: "4⊗1", role: "baseline", params: 120000, flops_per_token: 250000, metric_value: 0.075 },
  { label: "4⊗6", role: "looped", params: 120000, flops_per_token: 1500000, metric_value: 0.9935 },
];

describe("comparisonTable", () => {
  it("prints Markdown", () => {
    expect(comparisonTable(rows, "accuracy", "markdown")).toBe(
      [
        "| model | role | params | FLOPs/token | Accuracy |",
        "| --- | --- | ---: | ---: | ---: |",
        "| 4⊗1 | baseline | 120,000 | 250,000 | 7.50 % |",
        "| 4⊗6 | looped | 120,000 | 1,500,000 | 99.35 % |",
      ].join("\n"),
    );
  });

  it("prints aligned plain text", () => {
    const lines = comparisonTable(rows, "ppl").split("\n");
    expect(lines[0]).toBe("model  role       params  FLOPs/token  Perplexity");
    expect(lines[2]).toBe("4⊗1    baseline  120,000      250,000        0.07");
    expect(lines).toHaveLength(4);
  });

  it("formats metrics and rejects unknown formats", () => {
    expect(formatMetric("ppl", 12.3456)).toBe("12.35");
    expect(formatMetric("accuracy", 0.5)).toBe("50.00 %");
    expect(() => comparisonTable(rows, "ppl", "html" as never)).toThrow(
      /format must be "markdown" or "text", got "html"/,
    );
  });
});
