// Command-line flags of `npm run demo`.

export interface DemoArgs {
  /** Seconds of load. */
  durationS: number;
  /** A real Triton (host:port); absent: the embedded reference servers. */
  url: string | undefined;
  /** The model the Triton workload calls. */
  model: string;
  /** Where the HTML report goes. */
  reportDir: string;
  /** Seed of the workload's random choices (prompts, burst phases). */
  seed: number;
  help: boolean;
}

export const USAGE = `usage: npm run demo -- [options]

  --duration <s>   seconds of load (default 15)
  --url <host:port>
                   a real Triton instead of the embedded reference servers
  --model <name>   model for the Triton workload: FP32 inputs, max_batch_size > 0
                   (default simulated_gpu embedded, add_sub with --url)
  --report-dir <d> where the HTML report is written (default reports)
  --seed <n>       seed of the workload's random choices (default 1)
  -h, --help       this text
`;

export class UsageError extends Error {}

function value(argv: readonly string[], index: number, flag: string): string {
  const next = argv[index + 1];
  if (next === undefined || next.startsWith('--')) throw new UsageError(`${flag} needs a value`);
  return next;
}

function positive(text: string, flag: string, max: number): number {
  const parsed = Number(text);
  if (!Number.isFinite(parsed) || parsed <= 0 || parsed > max)
    throw new UsageError(`${flag} must be a number in (0, ${max}], not '${text}'`);
  return parsed;
}

/** Parses `--flag value` and `--flag=value`; throws UsageError on anything unknown. */
export function parseArgs(argv: readonly string[]): DemoArgs {
  const args: DemoArgs = {
    durationS: 15,
    url: undefined,
    model: '',
    reportDir: 'reports',
    seed: 1,
    help: false,
  };
  const expanded = argv.flatMap((arg) => {
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    return eq === -1 ? [arg] : [arg.slice(0, eq), arg.slice(eq + 1)];
  });
  for (let index = 0; index < expanded.length; index++) {
    const flag = expanded[index] as string;
    switch (flag) {
      case '--duration':
        args.durationS = positive(value(expanded, index++, flag), flag, 3600);
        break;
      case '--url':
        args.url = value(expanded, index++, flag);
        break;
      case '--model':
        args.model = value(expanded, index++, flag);
        break;
      case '--report-dir':
        args.reportDir = value(expanded, index++, flag);
        break;
      case '--seed':
        args.seed = Math.floor(positive(value(expanded, index++, flag), flag, 2 ** 31));
        break;
      case '-h':
      case '--help':
        args.help = true;
        break;
      default:
        throw new UsageError(`unknown argument '${flag}'`);
    }
  }
  if (args.model === '') args.model = args.url === undefined ? 'simulated_gpu' : 'add_sub';
  return args;
}
