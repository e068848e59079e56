/**
 * A workspace's `.toolpin/sources.jsonc`: the CLI's way of naming the modules that re-export
 * `defineConnector` or `mcpInvoke$` (core/documents/source/sourceNames.ts), the same two lists as
 * the editor's `toolpin.sources.connectorFunctions` and `toolpin.sources.invokeFunctions`:
 *
 *     { "invokeFunctions": ["@acme/platform", "@acme/platform#step"], "connectorFunctions": [] }
 *
 * A folder without the file has the built-in names. A file that cannot be read, is not JSONC or
 * holds a wrong entry gives problems (the entries that are right still apply); the CLI reports
 * them and stops, since checking with half the names would call pins absent that are not.
 */
import * as path from 'node:path';
import { parse, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { isNotARegularFile, readRegularText } from './regularFile';
import { BUILT_IN_SOURCE_NAMES, setDefaultSourceNames, type SourceNames, sourceNamesFrom } from '../core/documents/source/sourceNames';

/** The file, relative to a workspace folder. */
export const SOURCE_NAMES_FILE = '.toolpin/sources.jsonc';

export interface SourceNamesFile {
  readonly names: SourceNames;
  /** Each problem in a sentence, naming the file; empty when the file is absent or right. */
  readonly problems: readonly string[];
}

/** Reads a workspace folder's names. Never throws. */
export async function readSourceNamesFile(folder: string): Promise<SourceNamesFile> {
  const file = path.join(folder, ...SOURCE_NAMES_FILE.split('/'));
  let text: string;
  try {
    text = await readRegularText(file);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { names: BUILT_IN_SOURCE_NAMES, problems: [] };
    return { names: BUILT_IN_SOURCE_NAMES, problems: [`${SOURCE_NAMES_FILE} cannot be read (${isNotARegularFile(error) ? error.message : (code ?? String(error))})`] };
  }
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) return { names: BUILT_IN_SOURCE_NAMES, problems: errors.map((error) => `${SOURCE_NAMES_FILE}: ${printParseErrorCode(error.error)} at offset ${error.offset}`) };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { names: BUILT_IN_SOURCE_NAMES, problems: [`${SOURCE_NAMES_FILE} is not an object with "connectorFunctions" and "invokeFunctions"`] };
  const { names, problems } = sourceNamesFrom(value);
  return { names, problems: problems.map((found) => `${SOURCE_NAMES_FILE}: ${found}`) };
}

/**
 * The CLI's start of a run: makes the names of the workspace folder (`workspace`, relative to
 * `cwd`; by default `cwd` itself) the run's default
 * (core/documents/source/sourceNames.ts), or writes the file's problems to `stderr` and returns
 * false, for the command to exit with 2.
 */
export async function useWorkspaceSourceNames(stderr: (text: string) => void, command: string, cwd: string, workspace: string | undefined): Promise<boolean> {
  const { names, problems } = await readSourceNamesFile(path.resolve(cwd, workspace ?? '.'));
  for (const found of problems) stderr(`toolpin ${command}: ${found}\n`);
  if (problems.length > 0) return false;
  setDefaultSourceNames(names);
  return true;
}
