import { spawn } from 'node:child_process';
import { AttemptError, renderForAttempt, type TriggerEnvironment, type TriggerNotification } from './types.js';

/** Credentials the listener uses towards the server: a trigger has no reason to hold them. */
const WITHHELD = ['AVISO_TOKEN', 'AVISO_USERNAME', 'AVISO_PASSWORD'];
const STDERR_TAIL = 4096;

export interface CommandOptions {
  readonly command: string;
  readonly env: Readonly<Record<string, string>>;
  readonly workingDir: string | undefined;
  readonly timeoutMs: number | undefined;
}

export function identifierVariable(key: string): string {
  return `AVISO_IDENTIFIER_${key.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** The child's environment: ours minus credentials and template-read variables, plus AVISO_*, plus `env:`. */
export function commandEnvironment(
  n: TriggerNotification,
  parent: NodeJS.ProcessEnv,
  envRead: ReadonlySet<string>,
  extra: Readonly<Record<string, string>>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (!WITHHELD.includes(name) && !envRead.has(name)) env[name] = value;
  }
  env.AVISO_EVENT_TYPE = n.view.event_type;
  env.AVISO_SEQUENCE = String(n.view.sequence);
  for (const [key, value] of Object.entries(n.view.identifier)) {
    env[identifierVariable(key)] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  env.AVISO_PAYLOAD_JSON = JSON.stringify(n.view.payload ?? null);
  env.AVISO_NOTIFICATION_JSON = JSON.stringify(n.view);
  return { ...env, ...extra };
}

export async function runCommand(n: TriggerNotification, options: CommandOptions, ctx: TriggerEnvironment): Promise<void> {
  const rendered = renderForAttempt(options.command, n, ctx, 'shell', 'command');
  const child = spawn('/bin/sh', ['-c', rendered.text], {
    cwd: options.workingDir,
    env: commandEnvironment(n, ctx.env, rendered.envRead, options.env),
    // stdout is dropped (payloads stay out of our output); stderr's tail explains a failure.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  }).catch((error: unknown) => {
    throw new AttemptError(`command trigger could not start /bin/sh: ${(error as Error).message}`, false);
  });
  if (timer) clearTimeout(timer);
  if (timedOut) throw new AttemptError(`command trigger timed out after ${options.timeoutMs} ms`, false);
  if (result.code !== 0) {
    const how = result.code === null ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    const tail = stderr.trim() ? `; stderr: ${stderr.trim()}` : '';
    throw new AttemptError(`command trigger ${how}${tail}`, true);
  }
}
