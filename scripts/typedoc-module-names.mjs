// TypeDoc plugin (typedoc.json): names each module of the API reference after the import path a
// user writes (`@infergate/core/http`) instead of its folder (`core/src/http`).
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const [name, ...subpath] = module.name.replace(/\/index$/, '').split('/src');
      module.name = `@infergate/${name}${subpath.join('')}`;
    }
  });
}
