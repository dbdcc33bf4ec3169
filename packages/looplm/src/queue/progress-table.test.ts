import { describe, expect, it } from "vitest";
import { progressTable, progressView } from "./progress-table.js";

describe("progressTable", () => {
  it("lists every member with state, worker, step and result, and counts them", () => {
    const t = progressTable([
      { label: "1⊗1", state: "done", worker: "a:1", step: 800, total: 800, detail: "66.21 %" },
      { label: "1⊗2", state: "running", worker: "b:2", step: 120, total: 800 },
      { label: "1⊗4", state: "queued", total: 800 },
    ]);
    expect(t.split("\n")).toEqual([
      "member  state    worker  step     result",
      "------  -------  ------  -------  -------",
      "1⊗1     done     a:1     800/800  66.21 %",
      "1⊗2     running  b:2     120/800",
      "1⊗4     queued",
      "1/3 done, 1 running, 1 waiting, 0 failed",
    ]);
  });

  it("writes one line per change of state when the stream is no terminal", () => {
    let out = "";
    const stream = {
      isTTY: false,
      write: (s: string) => (out += s),
    } as unknown as NodeJS.WriteStream;
    const v = progressView(stream);
    v.update([{ label: "1⊗2", state: "queued" }]);
    v.update([{ label: "1⊗2", state: "queued" }]);
    v.update([{ label: "1⊗2", state: "running", worker: "b:2", step: 5, total: 9 }]);
    v.update([{ label: "1⊗2", state: "running", worker: "b:2", step: 7, total: 9 }]);
    v.update([{ label: "1⊗2", state: "done", detail: "74.80 %" }]);
    expect(out).toBe("1⊗2: queued\n1⊗2: running on b:2\n1⊗2: done (74.80 %)\n");
  });
});
