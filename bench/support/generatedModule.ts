/**
 * The TypeScript module the source benchmarks share (bench/tsParsers.bench.ts, bench/sources.bench.ts):
 * written as users write them, with an aliased import, typed helpers and `calls` `mcpInvoke$` calls
 * of 10 lines each, mixed quotes and `as const` arguments.
 */
export interface ModuleShape {
  /** The first line: the import of the pin function (or, for a module without pins, another one). */
  readonly importLine: string;
  /** The tool a call names. */
  readonly tool: (index: number) => string;
  /** The schema pin a call carries. */
  readonly pin: (index: number) => string;
}

export function generatedModule(calls: number, shape: ModuleShape): string {
  const lines = [shape.importLine, `import type { Step } from '@loom/core';`, ''];
  for (let index = 0; index < calls; index++) {
    lines.push(
      `/** Step ${index}: reads one record. */`,
      `export const step${index}: Step = invoke('read#${index}', {`,
      `  toolName: '${shape.tool(index)}',`,
      `  server: "records",`,
      `  expectedSchemaHash: '${shape.pin(index)}',`,
      `  arguments: { id: ${index}, label: \`record ${index}\` } as const,`,
      `});`,
      `export function describe${index}(input: { id: number }): string {`,
      `  return \`\${input.id}\`;`,
      `}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** The import of the pin function under the alias the module calls. */
export const ALIASED_INVOKE_IMPORT = `import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';`;
