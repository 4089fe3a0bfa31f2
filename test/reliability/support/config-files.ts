import { renameSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

/**
 * Replaces a configuration file in one step (write beside it, then rename over it), as a careful
 * operator or a Kubernetes ConfigMap update does: a reload that reads the file meanwhile sees the old
 * text or the new one, never half of each. `content` is YAML from an object, or text as given.
 */
export function replaceConfigFile(file: string, content: Record<string, unknown> | string): void {
  const next = `${file}.next`;
  writeFileSync(next, typeof content === 'string' ? content : stringify(content));
  renameSync(next, file);
}
