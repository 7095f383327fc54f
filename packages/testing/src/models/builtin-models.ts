import type { ModelDefinition } from '../model-definition.js';
import type { SimulatedGpu } from '../simulated-gpu.js';
import { accumulateModel } from './accumulate.js';
import { addSubModel } from './add-sub.js';
import { failModel } from './fail.js';
import { generateModel } from './generate.js';
import { identityModel } from './identity.js';
import { repeatModel } from './repeat.js';
import { simulatedGpuModel } from './simulated-gpu-model.js';

/** The models every test server starts with unless `builtins: false`. */
export function builtinModels(gpu: SimulatedGpu, gpuMaxBatchSize: number): ModelDefinition[] {
  return [
    identityModel(),
    addSubModel(),
    simulatedGpuModel(gpu, gpuMaxBatchSize),
    failModel(),
    repeatModel(),
    accumulateModel(),
    generateModel(),
  ];
}
