// `@infergate/model-config/cli`: the `infergate model-config` subcommand, for the `infergate` bin.
export type { CliIo } from './cli/cli-io.js';
export { run, USAGE } from './cli/model-config-command.js';
