import { ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import type { ModelConfig } from '@infergate/core/proto';
import { z } from 'zod';
import { LINT_RULES, type LintFinding } from './lint-rules.js';

export const lintOptionsSchema = z
  .object({
    /** Longest a request may take end to end, in ms; rules about delays and timeouts need it. @default none */
    latencyBudgetMs: z.number().positive().finite().optional(),
    /** GPUs the server has; `instances-over-gpus` needs it. @default none */
    gpus: z.number().int().nonnegative().optional(),
    /** Most instances of the model one GPU may hold; `instances-over-gpus` checks it with `gpus`. @default none */
    maxInstancesPerGpu: z.number().int().positive().optional(),
    /** Whether clients call the model on the streaming RPC; `false` makes decoupled models an error. @default none */
    streamingClient: z.boolean().optional(),
    /** Rule ids not to run. @default [] */
    disable: z.array(z.string()).default([]),
  })
  .strict();

// An interface, not a type alias, so that the API reference lists every field.
/** Options of `lintModelConfig`. */
export interface LintOptions extends z.input<typeof lintOptionsSchema> {}

/**
 * Runs every lint rule (`LINT_RULES`) over a configuration. Findings are ordered errors first; each
 * names its rule, the path in the config and what to change. An unknown id in `disable` is an
 * INVALID_ARGUMENT, so a typo does not silently keep a rule on.
 */
export function lintModelConfig(config: ModelConfig, options: LintOptions = {}): LintFinding[] {
  const { disable, ...context } = parseOptions(lintOptionsSchema, options, 'lint options');
  const unknown = disable.filter((id) => !LINT_RULES.some((rule) => rule.id === id));
  if (unknown.length > 0) {
    const ids = LINT_RULES.map((rule) => rule.id).join(', ');
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `lint options: disable: unknown rule ${unknown.join(', ')}; the rules are ${ids}`,
    );
  }
  const findings: LintFinding[] = [];
  for (const rule of LINT_RULES) {
    if (disable.includes(rule.id)) continue;
    for (const found of rule.check(config, context))
      findings.push({ rule: rule.id, severity: rule.severity, ...found });
  }
  return findings.sort((a, b) => Number(a.severity === 'warning') - Number(b.severity === 'warning'));
}

/** One line per finding, as compilers print them: `config.pbtxt: error unbounded-queue: …`. */
export function formatFinding(finding: LintFinding, source: string): string {
  return `${source}: ${finding.severity} ${finding.rule} (${finding.path}): ${finding.message}`;
}
