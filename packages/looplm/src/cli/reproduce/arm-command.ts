/**
 * The `looplm sweep` command behind each (arm, seed) of a study: printed beside the results, and
 * what `--jobs` runs in child processes.
 */
import { join } from "node:path";
import { flagArgs, flagLine } from "./arm-inputs.js";
import type { ArmDef } from "./study-types.js";

export function seedDir(outDir: string, arm: string, seed: number): string {
  return join(outDir, arm, `seed-${seed}`);
}

/** The `looplm sweep` command that trains one arm for one seed (what the study runs). */
export function armCommand(arm: ArmDef, seed: number, outDir: string): string {
  return `looplm sweep --protocol ${arm.protocol} ${flagLine({ ...arm.task })} --base ${arm.base} --loops ${arm.loops.join(",")} ${flagLine({ ...arm.model })} ${flagLine({ ...arm.train })} --seed ${seed} --out ${seedDir(outDir, arm.id, seed)}`;
}

/** The same command's arguments after `looplm` (a child process runs exactly this). */
export function armArgs(arm: ArmDef, seed: number, outDir: string): string[] {
  return [
    "sweep",
    ...["--protocol", arm.protocol],
    ...flagArgs({ ...arm.task }),
    ...["--base", String(arm.base), "--loops", arm.loops.join(",")],
    ...flagArgs({ ...arm.model }),
    ...flagArgs({ ...arm.train }),
    ...["--seed", String(seed), "--out", seedDir(outDir, arm.id, seed)],
  ];
}
