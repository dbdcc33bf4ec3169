/*
 * `--exit`: exit rules (docs/exit-gate.md "Exit rules"), one parser for every command that takes
 * them: fixed:<r>, gate:<q>, confidence:<τ>, entropy:<τ>, state-change:<ε>, agree:<k>, oracle.
 */
import {
  checkExitRule,
  type ExitRule,
  exitRuleNeeds,
  formatExitRule,
  isRealisable,
  parseExitRules,
} from "@loop/exit-gate";
import { CliError } from "../errors.js";

/** What `--exit` takes, as help text shows it. */
export const EXIT_SYNTAX =
  "fixed:<r> | gate:<q> | confidence:<τ> | entropy:<τ nats> | state-change:<ε> | agree:<k> | oracle";

/** The parser of `--exit <rules>` (comma-separated): each error one line naming the flag. */
export function exitRulesOption(flag = "--exit"): (v: string) => ExitRule[] {
  return (v) => {
    try {
      return parseExitRules(v);
    } catch (e) {
      throw new CliError(`${flag}: ${(e as Error).message}`);
    }
  };
}

/**
 * Check `rules` against a model of R loop steps (with or without a gate); `evalOnly` false
 * refuses the oracle, which reads the target.
 */
export function checkExitRules(
  rules: readonly ExitRule[],
  model: { R: number; hasGate: boolean; path: string },
  evalOnly: boolean,
  flag = "--exit",
): void {
  for (const rule of rules) {
    const name = formatExitRule(rule);
    try {
      checkExitRule(rule, model.R, flag);
    } catch (e) {
      throw new CliError(`${(e as Error).message} (the model has ${model.R} loop steps)`);
    }
    if (exitRuleNeeds(rule).gate && !model.hasGate)
      throw new CliError(
        `${flag} ${name} needs a model with an exit gate; ${model.path} has "exit_gate": false`,
      );
    if (!evalOnly && !isRealisable(rule))
      throw new CliError(
        `${flag} ${name} is not realisable (it reads the target): it runs in looplm eval only`,
      );
  }
}
