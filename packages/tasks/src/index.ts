export { allocBatch, argmaxLogits, scoreTargets, sumScores } from "./batch.js";
export {
  evaluatePrefix,
  MANO_MODULUS,
  MANO_OPERATORS,
  type ManoOperator,
  sampleExpression,
} from "./mano/expression.js";
export {
  MANO_DEFAULT_EVAL_SEED,
  type ManoConfig,
  type ManoExample,
  ManoTask,
  mano,
  manoSymbols,
} from "./mano/mano-task.js";
export { alphabetSymbols, pHopPosition } from "./phop/hops.js";
export {
  PHOP_DEFAULT_EVAL_SEED,
  type PHopConfig,
  type PHopExample,
  PHopTask,
  pHop,
} from "./phop/phop-task.js";
export { deriveSeed, Prng, type PrngState } from "./prng.js";
export {
  type Batch,
  type EvalSetOptions,
  IGNORE_INDEX,
  type Score,
  type Task,
  type TaskCursor,
} from "./task.js";
export { Vocabulary } from "./vocabulary.js";
