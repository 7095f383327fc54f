import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.js';

export default defineConfig(packageConfig({ index: 'src/index.ts' }));
