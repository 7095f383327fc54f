import { run as modelConfig } from '@infergate/model-config/cli';
import { CommandRegistry } from './command-registry.js';
import * as config from './commands/config.js';
import * as health from './commands/health.js';
import * as infer from './commands/infer.js';
import * as load from './commands/load.js';
import * as metadata from './commands/metadata.js';
import * as models from './commands/models.js';
import * as perf from './commands/perf.js';
import * as serveTest from './commands/serve-test.js';
import * as stats from './commands/stats.js';
import * as stream from './commands/stream.js';
import * as unload from './commands/unload.js';

/** A registry holding the built-in subcommands, in the order `--help` lists them. */
export function defaultCommands(): CommandRegistry {
  const registry = new CommandRegistry();
  const builtins = {
    health,
    models,
    metadata,
    config,
    infer,
    stream,
    stats,
    perf,
    load,
    unload,
    'serve-test': serveTest,
  };
  for (const [name, module] of Object.entries(builtins)) {
    registry.register({ name, summary: module.summary, run: module.run });
  }
  // Subcommands that live with their package.
  registry.register({
    name: 'model-config',
    summary: 'Lint, generate, diff or apply a Triton model configuration',
    run: modelConfig,
  });
  return registry;
}
