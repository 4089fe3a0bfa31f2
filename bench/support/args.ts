import { parseArgs } from 'node:util';

export interface BenchArgs {
  readonly quick: boolean;
  /** Scenario names to run; all when empty. */
  readonly only: readonly string[];
  /** Directory for the `--cpu-prof` profiles of every child process. */
  readonly profileDir: string | undefined;
}

export const USAGE = `usage: npm run bench [-- [--quick] [--only a,b] [--profile [--profile-dir DIR]]]
  --quick          smaller sizes, same measurements (under a minute)
  --only a,b       run only these scenarios
  --profile        run every child process (server, baselines, load generators) with
                   --cpu-prof; profiles in bench/profiles, or --profile-dir DIR`;

export function parseBenchArgs(argv: readonly string[], defaultProfileDir: string): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'profile-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = (values.only ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const profileDir = values['profile-dir'] ?? (values.profile ? defaultProfileDir : undefined);
  return { quick: values.quick ?? false, only, profileDir };
}
