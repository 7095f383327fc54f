import { defineConfig, type Options } from 'tsup';

/**
 * Shared build settings for every package: ESM + CJS + declarations, one entry per public subpath.
 * Each package's own tsup.config.ts calls this with its entries.
 */
export function packageConfig(entry: Record<string, string>, extra: Partial<Options> = {}): Options {
  return {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    // No source maps in the tarballs: they were half of each package, and dist is plain, unminified JS.
    sourcemap: false,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    treeshake: true,
    // import.meta.url in the CommonJS build (core's lazy requires use it).
    shims: true,
    ...extra,
  };
}

export default defineConfig(packageConfig({ index: 'src/index.ts' }));
