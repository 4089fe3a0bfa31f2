import { appendFile } from 'node:fs/promises';
import { AttemptError, type TriggerEnvironment, type TriggerNotification } from './types.js';

/** echo: pretty JSON after a leader line on a terminal, one compact JSON line otherwise. */
export async function runEcho(n: TriggerNotification, env: TriggerEnvironment): Promise<void> {
  if (!env.human) return env.write(`${JSON.stringify(n.view)}\n`);
  const who = env.listenerName === undefined ? '' : `listener: ${env.listenerName}, `;
  const leader = `new notification (${who}trigger: echo):`;
  await env.write(`${env.color ? `\u001b[1;36m${leader}\u001b[0m` : leader}\n${JSON.stringify(n.view, null, 2)}\n`);
}

/** log: appends one compact JSON line; the parent directory must already exist. */
export async function runLog(n: TriggerNotification, path: string): Promise<void> {
  try {
    await appendFile(path, `${JSON.stringify(n.view)}\n`);
  } catch (error) {
    throw new AttemptError(`log trigger cannot append to ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, false);
  }
}
