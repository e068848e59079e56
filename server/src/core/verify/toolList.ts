/**
 * Reading MCP tools from JSON given by a user (the `toolpin hash` input): one tool object, an
 * array of tools, or a `tools/list` result `{"tools": [...]}`. Bad entries are reported by index,
 * never thrown.
 *
 * Contract: a tool is read by the same reader live verification uses (`readListedTool` in
 * listing.ts), so `toolpin hash` pins exactly the tools verification can pin and refuses, with
 * the same reason, those it calls unpinnable (a tool in an older shape, `input_schema`). `hash` is
 * how Toolpin's hashing is checked from outside: the two must never disagree.
 */
import { readListedTool } from './listing';
import { isRecord } from '../json/values';
import type { PinnableTool } from '../pins/pins';

export interface ToolReadProblem {
  /** A JSON Pointer to the offending value, e.g. `/tools/3`. */
  readonly path: string;
  readonly message: string;
}

export interface ToolReadResult {
  readonly tools: PinnableTool[];
  readonly problems: ToolReadProblem[];
}

/** Extracts the tools from a parsed JSON value. */
export function readTools(value: unknown): ToolReadResult {
  let candidates: unknown[];
  let base: string;
  if (Array.isArray(value)) {
    candidates = value;
    base = '';
  } else if (isRecord(value) && Array.isArray(value.tools)) {
    candidates = value.tools;
    base = '/tools';
  } else if (isRecord(value) && 'name' in value) {
    candidates = [value];
    base = '';
  } else {
    return {
      tools: [],
      problems: [{ path: '', message: 'expected an MCP tool object, an array of tools, or a tools/list result {"tools": [...]}' }],
    };
  }
  const tools: PinnableTool[] = [];
  const problems: ToolReadProblem[] = [];
  candidates.forEach((candidate, index) => {
    const path = Array.isArray(value) || base ? `${base}/${index}` : '';
    if (!isRecord(candidate)) {
      problems.push({ path, message: 'a tool must be an object' });
      return;
    }
    if (typeof candidate.name !== 'string' || candidate.name.length === 0) {
      problems.push({ path: `${path}/name`, message: 'a tool needs a non-empty string "name"' });
      return;
    }
    if (candidate.description !== undefined && typeof candidate.description !== 'string') {
      problems.push({ path: `${path}/description`, message: `the description of "${candidate.name}" must be a string` });
      return;
    }
    if (candidate.inputSchema !== undefined && !isRecord(candidate.inputSchema)) {
      problems.push({ path: `${path}/inputSchema`, message: `the inputSchema of "${candidate.name}" must be an object` });
      return;
    }
    const listed = readListedTool(candidate);
    if (typeof listed === 'string') {
      problems.push({ path, message: `not a tool: ${listed}` });
      return;
    }
    if (listed.unpinnable !== undefined) {
      problems.push({ path, message: `"${listed.name}" cannot be pinned: ${listed.unpinnable}` });
      return;
    }
    tools.push({
      name: listed.name,
      ...(listed.description !== undefined ? { description: listed.description } : {}),
      ...(listed.inputSchema !== undefined ? { inputSchema: listed.inputSchema } : {}),
    });
  });
  return { tools, problems };
}
