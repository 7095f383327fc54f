import { ErrorCode, InfergateError } from '@infergate/core';
import {
  DataType,
  type ModelConfig,
  type ModelDynamicBatching,
  type ModelEnsembling,
  type ModelInput,
  ModelInstanceGroup_Kind,
  type ModelOutput,
} from '@infergate/core/proto';

/**
 * The rules Triton applies when it loads a configuration (and a few it would only find at run time),
 * as messages that say what to change. An empty list means the configuration is well formed; lint
 * rules (`lintModelConfig()`) judge whether it is a good idea.
 */
export function modelConfigProblems(config: ModelConfig): string[] {
  const problems: string[] = [];
  if (config.maxBatchSize < 0)
    problems.push(`max_batch_size: ${config.maxBatchSize} must be 0 (no batching) or more`);
  tensorProblems('input', config.input, problems);
  tensorProblems('output', config.output, problems);
  const scheduling = config.schedulingChoice;
  if (scheduling.case === 'dynamicBatching') batchingProblems(config, scheduling.value, problems);
  if (scheduling.case === 'ensembleScheduling') ensembleProblems(config, scheduling.value, problems);
  if (config.platform === 'ensemble' && scheduling.case !== 'ensembleScheduling') {
    problems.push("platform: 'ensemble' needs ensemble_scheduling with its steps");
  }
  if (scheduling.case === 'sequenceBatching') {
    const names = scheduling.value.controlInput.map((control) => control.name);
    for (const name of duplicates(names))
      problems.push(`sequence_batching.control_input: '${name}' is declared twice`);
  }
  config.instanceGroup.forEach((group, index) => {
    const at = `instance_group[${index}]`;
    if (group.count < 0) problems.push(`${at}.count: ${group.count} must be 1 or more (0 means 1)`);
    if (group.kind === ModelInstanceGroup_Kind.CPU && group.gpus.length > 0) {
      problems.push(`${at}.gpus: a KIND_CPU group runs on no GPU; remove gpus or use KIND_GPU`);
    }
    for (const gpu of group.gpus.filter((index) => index < 0))
      problems.push(`${at}.gpus: ${gpu} is not a GPU index`);
    group.rateLimiter?.resources.forEach((resource, resourceIndex) => {
      const resourceAt = `${at}.rate_limiter.resources[${resourceIndex}]`;
      if (resource.name === '') problems.push(`${resourceAt}.name: a resource needs a name`);
    });
    for (const name of duplicates((group.rateLimiter?.resources ?? []).map((resource) => resource.name)))
      problems.push(`${at}.rate_limiter.resources: '${name}' is listed twice`);
  });
  for (const name of duplicates(
    config.instanceGroup.map((group) => group.name).filter((name) => name !== ''),
  ))
    problems.push(`instance_group: two groups are named '${name}'`);
  return problems;
}

/** Throws one INVALID_ARGUMENT listing every problem of `modelConfigProblems()`. */
export function validateModelConfig(config: ModelConfig, what = 'model config'): ModelConfig {
  const problems = modelConfigProblems(config);
  if (problems.length > 0) {
    const name = config.name === '' ? what : `${what} '${config.name}'`;
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${name} is invalid:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return config;
}

function tensorProblems(
  kind: 'input' | 'output',
  tensors: readonly (ModelInput | ModelOutput)[],
  problems: string[],
): void {
  tensors.forEach((tensor, index) => {
    const at = `${kind}[${index}]${tensor.name === '' ? '' : ` '${tensor.name}'`}`;
    if (tensor.name === '') problems.push(`${at}.name: every ${kind} needs a name`);
    if (tensor.dataType === DataType.TYPE_INVALID)
      problems.push(`${at}.data_type: set a data type (e.g. TYPE_FP32)`);
    tensor.dims.forEach((dim, dimIndex) => {
      if (dim === 0n || dim < -1n)
        problems.push(`${at}.dims[${dimIndex}]: ${dim} must be positive or -1 (variable)`);
    });
    const shape = tensor.reshape?.shape;
    if (shape !== undefined && !shape.includes(-1n) && !tensor.dims.includes(-1n)) {
      const count = (dims: readonly bigint[]) => dims.reduce((product, dim) => product * dim, 1n);
      if (count(shape) !== count(tensor.dims)) {
        problems.push(
          `${at}.reshape: [${shape.join(', ')}] holds ${count(shape)} elements but dims [${tensor.dims.join(', ')}] hold ${count(tensor.dims)}`,
        );
      }
    }
  });
  for (const name of duplicates(tensors.map((tensor) => tensor.name).filter((name) => name !== '')))
    problems.push(`${kind}: '${name}' is declared twice`);
}

function batchingProblems(config: ModelConfig, batching: ModelDynamicBatching, problems: string[]): void {
  batching.preferredBatchSize.forEach((size) => {
    if (size <= 0) problems.push(`dynamic_batching.preferred_batch_size: ${size} must be positive`);
  });
  const levels = batching.priorityLevels;
  if (levels === 0n) {
    if (batching.defaultPriorityLevel !== 0n) {
      problems.push(
        'dynamic_batching.default_priority_level: set priority_levels too (it is 0, priorities are off)',
      );
    }
    if (Object.keys(batching.priorityQueuePolicy).length > 0) {
      problems.push(
        'dynamic_batching.priority_queue_policy: set priority_levels too (it is 0, priorities are off)',
      );
    }
    return;
  }
  if (batching.defaultPriorityLevel < 1n || batching.defaultPriorityLevel > levels) {
    problems.push(
      `dynamic_batching.default_priority_level: ${batching.defaultPriorityLevel} must be between 1 and priority_levels (${levels})`,
    );
  }
  for (const key of Object.keys(batching.priorityQueuePolicy)) {
    const level = BigInt(key);
    if (level < 1n || level > levels) {
      problems.push(
        `dynamic_batching.priority_queue_policy: level ${key} must be between 1 and priority_levels (${levels})`,
      );
    }
  }
  if (config.maxBatchSize === 0 && batching.preferredBatchSize.length > 0) {
    problems.push(
      'dynamic_batching.preferred_batch_size: the model does not batch (max_batch_size 0); remove them',
    );
  }
}

function ensembleProblems(config: ModelConfig, ensemble: ModelEnsembling, problems: string[]): void {
  if (config.platform !== 'ensemble') problems.push("ensemble_scheduling: set platform: 'ensemble'");
  if (ensemble.step.length === 0)
    problems.push('ensemble_scheduling.step: an ensemble needs at least one step');
  const available = new Set(config.input.map((input) => input.name));
  const produced = new Set<string>();
  ensemble.step.forEach((step, index) => {
    const at = `ensemble_scheduling.step[${index}]`;
    if (step.modelName === '') problems.push(`${at}.model_name: name the model this step runs`);
    for (const [modelInput, tensor] of Object.entries(step.inputMap)) {
      if (
        !available.has(tensor) &&
        !ensemble.step.some((other) => Object.values(other.outputMap).includes(tensor))
      ) {
        problems.push(
          `${at}.input_map: '${modelInput}' reads '${tensor}', which is neither an ensemble input nor any step's output`,
        );
      }
    }
    for (const tensor of Object.values(step.outputMap)) {
      if (produced.has(tensor))
        problems.push(`${at}.output_map: '${tensor}' is already written by another step`);
      produced.add(tensor);
    }
  });
  for (const output of config.output) {
    if (!produced.has(output.name)) {
      problems.push(
        `output '${output.name}': no ensemble step writes it (map a step output to '${output.name}')`,
      );
    }
  }
}

function duplicates(names: readonly string[]): string[] {
  return [...new Set(names.filter((name, index) => names.indexOf(name) !== index))];
}
