// Types of the plain-ESM layer check, for its unit test.
export interface Layer {
  rank: number;
  name: string;
  paths: string[];
}
export function layersOf(markdown: string): Layer[];
export function allowedOf(markdown: string): string[];
export function layerOfFile(file: string, layers: Layer[]): Layer | undefined;
export function importsOf(text: string): { specifier: string; typeOnly: boolean }[];
export function circlesOf(graph: Map<string, string[]>): string[][];
export function clientBoundaryProblem(file: string, target: string): string | undefined;
