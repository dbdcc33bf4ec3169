/** The settings form: read it into `Settings`, and show a loaded checkpoint's task in it. */
import type { Backbone } from "@loop/looped";
import type { ComputeBackend, Settings, TaskSettings } from "../settings.js";

function value(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
  if (el === null) throw new Error(`the form has no field "${name}"`);
  return el.value;
}

function num(form: HTMLFormElement, name: string, integer = true): number {
  const v = Number(value(form, name));
  if (!Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new Error(
      `${name} must be ${integer ? "an integer" : "a number"}, got "${value(form, name)}"`,
    );
  }
  return v;
}

export function readTask(form: HTMLFormElement): TaskSettings {
  return value(form, "task") === "mano"
    ? { name: "mano", maxOps: num(form, "maxOps") }
    : {
        name: "phop",
        alphabet: num(form, "alphabet"),
        length: num(form, "length"),
        hops: num(form, "hops"),
      };
}

export function readSettings(form: HTMLFormElement): Settings {
  const evalEvery = num(form, "evalEvery");
  if (evalEvery < 1) throw new Error(`eval every must be ≥ 1, got ${evalEvery}`);
  return {
    task: readTask(form),
    model: {
      backbone: value(form, "backbone") as Backbone,
      layers: num(form, "layers"),
      loops: num(form, "loops"),
      dModel: num(form, "dModel"),
      exitGate: (form.elements.namedItem("exitGate") as HTMLInputElement).checked,
    },
    train: {
      backend: value(form, "backend") as ComputeBackend,
      steps: num(form, "steps"),
      batchSize: num(form, "batchSize"),
      lr: num(form, "lr", false),
      evalEvery,
      evalCount: num(form, "evalCount"),
      seed: num(form, "seed"),
    },
  };
}

function set(form: HTMLFormElement, name: string, v: string | number): void {
  (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value = String(v);
}

/** Show the task's own fields only. */
export function showTaskFields(form: HTMLFormElement): void {
  const task = value(form, "task");
  for (const el of Array.from(form.querySelectorAll<HTMLElement>("[data-task]"))) {
    el.hidden = el.dataset.task !== task;
  }
}

export function writeTask(form: HTMLFormElement, t: TaskSettings): void {
  set(form, "task", t.name);
  if (t.name === "phop") {
    set(form, "alphabet", t.alphabet);
    set(form, "length", t.length);
    set(form, "hops", t.hops);
  } else set(form, "maxOps", t.maxOps);
  showTaskFields(form);
}
