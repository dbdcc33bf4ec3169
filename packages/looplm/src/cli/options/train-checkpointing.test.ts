import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addTrainOptions, buildTrainOptions, type TrainFlags } from "./train.js";

/** The TrainOptions `looplm train` builds from `args`. */
function parse(args: string[]) {
  const cmd = addTrainOptions(new Command().exitOverride());
  cmd.parse(args, { from: "user" });
  return buildTrainOptions(cmd.opts() as TrainFlags);
}

describe("--checkpointing", () => {
  it("is off by default, per loop step bare or with step, per layer with layer", () => {
    expect(parse([]).checkpointing).toBe(false);
    expect(parse(["--checkpointing"]).checkpointing).toBe(true);
    expect(parse(["--checkpointing", "step"]).checkpointing).toBe(true);
    expect(parse(["--checkpointing", "layer"]).checkpointing).toBe("layer");
  });

  it("refuses another value in one line naming the choices", () => {
    expect(() => parse(["--checkpointing", "block"])).toThrow(
      '--checkpointing must be one of step, layer, got "block"',
    );
  });
});
