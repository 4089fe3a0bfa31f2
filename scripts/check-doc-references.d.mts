// Types of the plain-ESM reference check, for its unit test.
export function slugOf(heading: string): string;
export function anchorsOf(markdown: string): Set<string>;
export function sectionNumbersOf(markdown: string): Set<string>;
export function danglingReferences(
  citingFile: string,
  text: string,
  readDoc: (path: string) => string | undefined,
): { line: number; reference: string }[];
