import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.js';

// The CLI (the `infergate-test-server` bin) is an entry of its own; it needs no declarations.
export default defineConfig(
  packageConfig({ index: 'src/index.ts', cli: 'src/cli.ts' }, { dts: { entry: { index: 'src/index.ts' } } }),
);
