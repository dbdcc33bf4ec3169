import { describe, expect, it } from "vitest";
import { pickCheckpoint } from "./checkpoint-pick.js";

const f = (...paths: string[]) => paths.map((path) => ({ path, file: path }));

describe("pickCheckpoint", () => {
  it("takes final/ and run.json from a dropped run folder", () => {
    const p = pickCheckpoint(
      f(
        "run/run.json",
        "run/log.jsonl",
        "run/checkpoints/step-000300/config.json",
        "run/checkpoints/step-000300/model.safetensors",
        "run/checkpoints/step-000300/optimizer.safetensors",
        "run/final/config.json",
        "run/final/model.safetensors",
        "run/final/vocab.json",
      ),
    );
    expect(p).toEqual({
      config: "run/final/config.json",
      weights: "run/final/model.safetensors",
      run: "run/run.json",
      folder: "final",
    });
  });

  it("takes the newest step without final/, and loose files", () => {
    const p = pickCheckpoint(
      f(
        "c/step-000100/config.json",
        "c/step-000100/model.safetensors",
        "c/step-000200/config.json",
        "c/step-000200/model.safetensors",
      ),
    );
    expect(p.folder).toBe("step-000200");
    expect(p.run).toBeNull();
    expect(pickCheckpoint(f("config.json", "model.safetensors")).weights).toBe("model.safetensors");
  });

  it("names what is missing", () => {
    expect(() => pickCheckpoint(f("final/config.json"))).toThrow(
      /config.json \+ model.safetensors.*got final\/config.json/,
    );
    expect(() => pickCheckpoint([])).toThrow(/got nothing/);
  });
});
