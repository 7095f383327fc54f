import { ErrorCode, InfergateError } from '@infergate/core';
import { describePort, type PortType, portMismatch } from '../port-type.js';
import type { Step } from '../step.js';

/** Where a value comes from: `input.<name>` or `<step>.<output>`, then `.field…` into json values. */
export interface Reference {
  source: string;
  port: string;
  fields: string[];
}

/** A step input's binding: a reference, optionally mapped (the map's result has type `type`). */
export interface Binding {
  from: string;
  map?: ((value: unknown) => unknown) | undefined;
  /** The mapped value's type. @default json */
  type?: PortType | undefined;
}

export interface GraphStep {
  step: Step;
  inputs: Readonly<Record<string, string | Binding>>;
}

export interface Graph {
  /** Steps in an order where each comes after the steps it reads. */
  order: string[];
  /** The steps each step reads from. */
  dependencies: Map<string, string[]>;
  references: Map<string, Map<string, { reference: Reference; binding: Binding }>>;
  outputs: Map<string, Reference>;
}

export const INPUT = 'input';

export function parseReference(text: string): Reference | undefined {
  const [source, port, ...fields] = text.split('.');
  if (source === undefined || source === '' || port === undefined || port === '' || fields.includes(''))
    return undefined;
  return { source, port, fields };
}

/**
 * Checks the graph and orders it. Every problem is collected; one INVALID_ARGUMENT lists them all:
 * unknown steps, inputs or outputs, unbound step inputs, type and shape mismatches, field paths into
 * non-json values, and cycles (with the path).
 */
export function buildGraph(
  name: string,
  inputs: Readonly<Record<string, PortType>>,
  steps: Readonly<Record<string, GraphStep>>,
  outputs: Readonly<Record<string, string>>,
): Graph {
  const problems: string[] = [];
  const references = new Map<string, Map<string, { reference: Reference; binding: Binding }>>();
  const dependencies = new Map<string, string[]>();

  const typeOf = (reference: Reference, where: string): PortType | undefined => {
    const ports = reference.source === INPUT ? inputs : steps[reference.source]?.step.outputs;
    if (ports === undefined) {
      problems.push(`${where}: '${reference.source}' is neither a step nor 'input'`);
      return undefined;
    }
    const type = ports[reference.port];
    if (type === undefined) {
      const known = Object.keys(ports).join(', ') || 'none';
      problems.push(
        `${where}: ${reference.source === INPUT ? 'the pipeline has no input' : `step '${reference.source}' has no output`} '${reference.port}' (it has: ${known})`,
      );
      return undefined;
    }
    if (reference.fields.length > 0) {
      if (type.kind !== 'json') {
        problems.push(
          `${where}: '${reference.source}.${reference.port}' is ${describePort(type)}; only json values have fields`,
        );
        return undefined;
      }
      return { kind: 'json' };
    }
    return type;
  };

  if (INPUT in steps) problems.push(`step '${INPUT}': the name is reserved for the pipeline's inputs`);
  for (const [stepName, graphStep] of Object.entries(steps)) {
    const bound = new Map<string, { reference: Reference; binding: Binding }>();
    const reads = new Set<string>();
    for (const inputName of Object.keys(graphStep.inputs)) {
      if (!(inputName in graphStep.step.inputs)) {
        problems.push(
          `step '${stepName}': binds '${inputName}', which the step does not take (it takes: ${Object.keys(graphStep.step.inputs).join(', ') || 'nothing'})`,
        );
      }
    }
    for (const [inputName, wanted] of Object.entries(graphStep.step.inputs)) {
      const where = `step '${stepName}' input '${inputName}'`;
      const raw = graphStep.inputs[inputName];
      if (raw === undefined) {
        problems.push(`${where}: not bound; bind it to 'input.<name>' or '<step>.<output>'`);
        continue;
      }
      const binding: Binding = typeof raw === 'string' ? { from: raw } : raw;
      const reference = parseReference(binding.from);
      if (reference === undefined) {
        problems.push(
          `${where}: '${binding.from}' is not a reference ('input.<name>' or '<step>.<output>[.field…]')`,
        );
        continue;
      }
      const type = typeOf(reference, where);
      if (type === undefined) continue;
      const delivered = binding.map === undefined ? type : (binding.type ?? { kind: 'json' });
      const mismatch = portMismatch(delivered, wanted);
      if (mismatch !== undefined) {
        problems.push(
          `${where} ← '${binding.from}': ${mismatch}${binding.map === undefined ? '; map it, or bind another value' : ''}`,
        );
      }
      if (reference.source !== INPUT) reads.add(reference.source);
      bound.set(inputName, { reference, binding });
    }
    references.set(stepName, bound);
    dependencies.set(stepName, [...reads]);
  }

  const outputReferences = new Map<string, Reference>();
  for (const [outputName, text] of Object.entries(outputs)) {
    const reference = parseReference(text);
    if (reference === undefined) {
      problems.push(`output '${outputName}': '${text}' is not a reference`);
      continue;
    }
    if (typeOf(reference, `output '${outputName}'`) !== undefined)
      outputReferences.set(outputName, reference);
  }

  const order = topologicalOrder(dependencies, problems);
  if (problems.length > 0) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `pipeline '${name}' is invalid:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return { order, dependencies, references, outputs: outputReferences };
}

function topologicalOrder(dependencies: Map<string, string[]>, problems: string[]): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (step: string, path: string[]): void => {
    if (state.get(step) === 'done') return;
    if (state.get(step) === 'visiting') {
      const cycle = [...path.slice(path.indexOf(step)), step];
      problems.push(
        `cycle: ${cycle.map((name) => `'${name}'`).join(' → ')}; a step cannot depend on its own output`,
      );
      return;
    }
    state.set(step, 'visiting');
    for (const dependency of dependencies.get(step) ?? []) {
      if (dependencies.has(dependency)) visit(dependency, [...path, step]);
    }
    state.set(step, 'done');
    order.push(step);
  };
  for (const step of dependencies.keys()) visit(step, []);
  return order;
}

/** The value a reference points at, fields included. */
export function resolveReference(
  reference: Reference,
  values: Map<string, Record<string, unknown>>,
): unknown {
  let value: unknown = values.get(reference.source)?.[reference.port];
  for (const field of reference.fields) {
    value =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined;
  }
  return value;
}
