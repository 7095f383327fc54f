// The system programs the test suite runs that npm cannot provide: `redis-server` (the Redis ledger
// tests) and `openssl` (throwaway TLS certificates). On Debian/Ubuntu as root, a missing one is
// installed with apt-get, saying so in one line; elsewhere each missing one is one line saying what to
// install. Why apt and not a bundled binary: docs/decisions/0005-test-setup-on-a-fresh-machine.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** What the suite needs, the Debian package that provides it and how to get it elsewhere. */
export const SYSTEM_TOOLS = [
  {
    command: process.env.REDIS_SERVER_BIN ?? 'redis-server',
    probe: ['--version'],
    debian: 'redis-server',
    elsewhere:
      'install Redis ≥ 6.2 (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis; Fedora/RHEL: dnf install redis; Alpine: apk add redis) or set REDIS_SERVER_BIN to its redis-server',
  },
  {
    command: 'openssl',
    probe: ['version'],
    debian: 'openssl',
    elsewhere:
      'install OpenSSL (Debian/Ubuntu: sudo apt-get install openssl; macOS: brew install openssl; Fedora/RHEL: dnf install openssl; Alpine: apk add openssl)',
  },
];

function runs(command, args) {
  const probe = spawnSync(command, args, { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

function canUseApt() {
  return (
    process.platform === 'linux' &&
    existsSync('/etc/debian_version') &&
    typeof process.getuid === 'function' &&
    process.getuid() === 0 &&
    runs('apt-get', ['--version'])
  );
}

/**
 * Makes sure every tool in SYSTEM_TOOLS runs. Returns the problems as one line each (empty when all
 * are there). apt-get's own output is shown only when it fails.
 */
export function ensureSystemTools(tools = SYSTEM_TOOLS) {
  const missing = tools.filter((tool) => !runs(tool.command, tool.probe));
  if (missing.length === 0) return [];
  if (canUseApt() && missing.every((tool) => tool.debian)) {
    const packages = missing.map((tool) => tool.debian);
    console.log(
      `infergate: installing ${packages.join(', ')} with apt-get (needed by the tests, not found on PATH)`,
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const update = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8', env });
    const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
      encoding: 'utf8',
      env,
    });
    if (update.status !== 0 || install.status !== 0) {
      const failed = install.status !== 0 ? install : update;
      console.error(`${failed.stdout ?? ''}${failed.stderr ?? ''}`.trimEnd());
    }
  }
  return tools
    .filter((tool) => !runs(tool.command, tool.probe))
    .map((tool) => `infergate: '${tool.command}' is missing: ${tool.elsewhere}.`);
}
