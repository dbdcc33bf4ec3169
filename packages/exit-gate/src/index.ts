export { detach, freeze, unfreeze } from "./detach.js";
export { ExitGate, type ExitGateConfig, type ExitGateOptions } from "./exit-gate.js";
export { exitPdf } from "./exit-pdf.js";
export {
  argmaxRow,
  checkExitRule,
  EXIT_RULE_KINDS,
  type ExitRule,
  type ExitRuleKind,
  type ExitRuleNeeds,
  exitRuleNeeds,
  formatExitRule,
  isRealisable,
  OnlineExitRule,
  parseExitRule,
  parseExitRules,
  type RuleStepData,
  relativeChange,
  ruleExitSteps,
  type StepSignals,
  softmaxStats,
} from "./exit-rule.js";
export { exitHistogram, meanExitStep, qSweep, type SweepPoint } from "./exit-stats.js";
export { exitStepName, formatQ } from "./format-q.js";
export { gateLogits } from "./gate-logits.js";
export { exitGateLogits } from "./gate-mix.js";
export {
  exitPdfOn,
  type GateKernels,
  gateLogitsOn,
  logExitPdfOn,
} from "./gate-on.js";
export { mixtureLogits, mixtureLogProbs } from "./mixture.js";
export { perStepCrossEntropy, perStepCrossEntropyDetached } from "./per-step-ce.js";
export { exitAtStep, selectLogits } from "./select-logits.js";
export {
  perStepCeOn,
  type StageKernels,
  stage1LossOn,
  stage2LossOn,
} from "./stage-losses-on.js";
export { DEFAULT_BETA, type Stage1Options, stage1Loss, stage1Objective } from "./stage1.js";
export {
  continuationLabels,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike,
  type Stage2Options,
  stage2Loss,
  stage2Objective,
} from "./stage2.js";
export {
  checkThreshold,
  exitCdf,
  fixedExitSteps,
  OnlineThresholdExit,
  type PdfLike,
  thresholdExit,
} from "./threshold-exit.js";
