import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/** The first `name` that is an executable file in one of `directories`, or undefined. */
export function findExecutable(name: string, directories: readonly string[]): string | undefined {
  return directories
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, name))
    .find(isExecutable);
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
