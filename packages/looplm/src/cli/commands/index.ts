/** Every command registers itself here (one import per command file). */
import type { Command } from "commander";

export function registerCommands(_program: Command): void {}
