import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { StepMetrics } from "../trainer.js";
import { loadCliProgress, reporterWith } from "./progress.js";

function fakeTty(): { stream: NodeJS.WriteStream; text: () => string } {
  const s = new PassThrough();
  let text = "";
  s.on("data", (c: Buffer) => {
    text += c.toString("utf8");
  });
  Object.assign(s, { isTTY: true, columns: 100, cursorTo() {}, clearLine() {}, moveCursor() {} });
  return { stream: s as unknown as NodeJS.WriteStream, text: () => text };
}

const step = (n: number): StepMetrics => ({
  step: n,
  loss: 1.5,
  lr: 1e-3,
  grad_norm: 0,
  tokens_per_s: 1000,
  elapsed_s: 0,
});

describe("progressReporter", () => {
  it("finds the optional cli-progress package when it is installed", () => {
    expect(typeof loadCliProgress()?.SingleBar).toBe("function");
  });

  it("draws a bar on a terminal when cli-progress is installed", () => {
    const t = fakeTty();
    const r = reporterWith(loadCliProgress(), { total: 2, label: "run" }, t.stream);
    r.update(step(2));
    r.stop();
    expect(t.text()).toContain("run [");
    expect(t.text()).toContain("2/2 | loss 1.5000 | 1000 tok/s");
  });

  it("falls back to plain lines on a terminal when cli-progress is missing", () => {
    const t = fakeTty();
    const r = reporterWith(undefined, { total: 2, label: "run", lineEvery: 1 }, t.stream);
    r.update(step(1));
    r.update(step(2));
    r.stop();
    expect(t.text()).toBe(
      "run step 1/2 loss 1.5000 lr 1.00e-3 1000 tok/s\nrun step 2/2 loss 1.5000 lr 1.00e-3 1000 tok/s\n",
    );
  });
});
