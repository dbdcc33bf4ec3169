export { withBlockLr } from "./block-lr.js";
export {
  type DeviceStepEngine,
  type DeviceTraining,
  deviceStepEngine,
} from "./device-step-engine.js";
export { deviceStageLoss, deviceTraining } from "./device-training.js";
export {
  DEFAULT_LOSS_SCALE,
  DynamicLossScale,
  type LossScaleOptions,
  type LossScaleState,
} from "./loss-scale.js";
export { type LossScaledEngine, lossScaledStepEngine } from "./loss-scaled-engine.js";
export type { MicroBatches } from "./micro-batches.js";
export { freezeForStage, stageLoss, stageParameters, trainableParameters } from "./objective.js";
export {
  BLOCK_LRS,
  type BlockLr,
  DEFAULT_TRAIN,
  resolveTrainOptions,
  STAGES,
  type Stage,
  type TrainOptions,
  trainWarnings,
} from "./options.js";
export type { StepEngine, StepResult } from "./step-engine.js";
export type { TrainableModel, TrainForwardOptions } from "./trainable-model.js";
export { NonFiniteError, type StepMetrics, Trainer, type TrainerState } from "./trainer.js";
