/**
 * Test support: the settings form's fields for the tiny model every page test trains (a 1⊗3
 * Mamba-2 of width 16 on 2-hop p-hop over 4 letters, no gate); a test adds its run's length,
 * batch, learning rate and evaluation fields, which differ with the backend's speed.
 */
export const TINY_MODEL_FIELDS = {
  task: "phop",
  alphabet: "4",
  length: "16",
  hops: "2",
  backbone: "mamba",
  layers: "1",
  loops: "3",
  dModel: "16",
  exitGate: false,
};
