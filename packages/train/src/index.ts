export { isBlockParameter, withBlockLr } from "./block-lr.js";
export { freezeForStage, stageLoss, trainableParameters } from "./objective.js";
export {
  BLOCK_LRS,
  type BlockLr,
  DEFAULT_TRAIN,
  resolveTrainOptions,
  STAGES,
  type Stage,
  type TrainOptions,
} from "./options.js";
export type { StepEngine, StepResult } from "./step-engine.js";
export { NonFiniteError, type StepMetrics, Trainer, type TrainerState } from "./trainer.js";
