export {
  type AccuracyOptions,
  type AccuracyResult,
  evaluateAccuracy,
  type GatedScore,
  type RuleScore,
  type StepScore,
} from "./accuracy.js";
export { type ClozeOptions, lastWordClozeItems } from "./cloze/last-word-cloze.js";
export {
  EVAL_FORMAT,
  type EvalFile,
  type ExitPoint,
  evalRecord,
  type GatedPoint,
  type HopsSection,
  type McSummary,
  type Metric,
  mcSection,
  metricSection,
  parseEvalFile,
} from "./eval-file.js";
export {
  DEFAULT_Q_SWEEP,
  type EvalForwardResult,
  type EvalModel,
  type Evaluated,
  type OnKernels,
  outputSource,
  type StepOutputSource,
  type StepOutputs,
  stepOutputs,
} from "./eval-model.js";
export { isArgmax, logProbAt } from "./log-prob.js";
export {
  evaluateManoByLength,
  type LengthAccuracy,
  type LengthAccuracyOptions,
  type LengthScore,
  MANO_LENGTH_STREAM,
  manoLengthBatches,
} from "./mano-length.js";
export {
  evaluateMultipleChoice,
  type McResult,
  type McStepResult,
} from "./multiple-choice/evaluate-mc.js";
export {
  type EncodedPair,
  encodePair,
  type LoglikRequest,
  type McTokenizer,
  makeRequest,
  mcRequests,
  type RequestOptions,
} from "./multiple-choice/harness-encode.js";
export { checkMcItem, type McItem, parseMcJsonl } from "./multiple-choice/mc-items.js";
export {
  charLength,
  type McMetrics,
  type McPrediction,
  mcMetrics,
  predictItem,
} from "./multiple-choice/mc-metrics.js";
export {
  type LoglikelihoodFn,
  type ModelLoglikOptions,
  modelLoglikelihoods,
} from "./multiple-choice/model-loglik.js";
export { parsePiqa, piqaContext } from "./multiple-choice/piqa.js";
export {
  evaluatePerplexity,
  type GatedPerplexity,
  type PerplexityOptions,
  type PerplexityResult,
  type RulePerplexity,
  type StepPerplexity,
} from "./perplexity.js";
export {
  type ChartSpec,
  evalHistoryChart,
  exitHistogramChart,
  frontierChart,
  lossChart,
  mcStepChart,
  seedSpreadChart,
  stepMetricChart,
  sweepChart,
} from "./report/charts.js";
export { formatEvalSummary } from "./report/eval-table.js";
export {
  type LogEntry,
  metricName,
  parseLog,
  parseRunInfo,
  parseSweep,
  type RunInfo,
  type SweepFile,
  type SweepRow,
} from "./report/run-data.js";
export { comparisonTable, formatMetric, formatTable, type TableRow } from "./report/table.js";
export type { RuleSummary } from "./rule-exits.js";
