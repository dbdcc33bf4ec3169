export { allocBatch, argmaxLogits, scoreTargets } from "./batch.js";
export { type BpeDefinition, ByteLevelBpeTokenizer } from "./lm/bpe-tokenizer.js";
export { type BpeTrainOptions, trainBpe } from "./lm/bpe-trainer.js";
export { BYTE_TO_CHAR, CHAR_TO_BYTE, toByteLevel } from "./lm/byte-level.js";
export { buildCharTokenizer, CharTokenizer, UNK } from "./lm/char-tokenizer.js";
export {
  type CorpusSplit,
  type SplitOptions,
  splitCorpus,
  type TextDocument,
} from "./lm/corpus.js";
export {
  encodeDocuments,
  LanguageModelTask,
  type LanguageModelTaskOptions,
} from "./lm/lm-task.js";
export { GPT2_SPLIT_PATTERN, preTokenize } from "./lm/pretokenize.js";
export {
  type AddedTokenJson,
  END_OF_TEXT,
  type TextTokenizer,
  type TokenizerJson,
} from "./lm/tokenizer.js";
export { tokenizerFromJson } from "./lm/tokenizer-json.js";
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
} from "./mano/mano-task.js";
export { alphabetSymbols, pHopPosition, pHopPositionsAll } from "./phop/hops.js";
export {
  PHOP_DEFAULT_EVAL_SEED,
  type PHopConfig,
  type PHopExample,
  PHopTask,
  pHop,
} from "./phop/phop-task.js";
export {
  type Batch,
  checkTaskVocab,
  type EvalBatches,
  type EvalSetOptions,
  IGNORE_INDEX,
  type Score,
  type Task,
  type TaskCursor,
  type TaskMetric,
  taskEvalBatches,
} from "./task.js";
export { Vocabulary } from "./vocabulary.js";
