import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.js';

// The `infergate` bin is an entry of its own; it needs no declarations.
export default defineConfig(
  packageConfig({ index: 'src/index.ts', bin: 'src/bin.ts' }, { dts: { entry: { index: 'src/index.ts' } } }),
);
