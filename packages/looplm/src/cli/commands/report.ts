/* `looplm report <run-or-sweep dir>`: write the folder's self-contained report.html. */
import { folderKind, renderRunReport, renderSweepReport } from "@loop/eval/node";
import type { Command } from "commander";
import { asCliError } from "../errors.js";

export function registerReport(program: Command): void {
  program
    .command("report")
    .description(
      "Write report.html (inline SVG plots) for a run folder (run.json) or a sweep folder (sweep.json)",
    )
    .argument("<dir>", "run folder or sweep folder")
    .addHelpText(
      "after",
      `
A run report has the loss curve, the eval metric during training and by loop step, and for a
gated model (after \`looplm eval --q-sweep\`) the exit-step histogram and depth/metric frontier.
A sweep report plots the metric against parameters and FLOPs/token, one point per N⊗R member.

Examples:
  looplm report runs/mano-4x6
  looplm report runs/mano-isoflops`,
    )
    .action(async (dir: string) => {
      const path = await asCliError(() =>
        folderKind(dir) === "run" ? renderRunReport(dir) : renderSweepReport(dir),
      );
      process.stdout.write(`wrote ${path}\n`);
    });
}
