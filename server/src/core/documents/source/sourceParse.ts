/**
 * Parsing a module for the source reader (sourceReader.ts): the top-level statements Babel gives,
 * and the parts it could not read, each with its position.
 *
 * Contracts:
 * - Never throws, whatever the text (Babel's own recursion throws `RangeError` on a 400-deep array
 *   or 100,000 nested parentheses; that is a part that cannot be read, not an empty module).
 * - The whole module is parsed once. Only when that fails is it split into top-level statements
 *   (approximated by lines: a statement starts at a line that begins at column 0 with code) and
 *   each is parsed on its own, at its own offset, so one statement that defeats the parser costs
 *   only itself: the rest of the module is still read, and nothing is read twice but the failed
 *   parse. Each statement that still fails is an {@link UnreadableRegion}.
 * - A file being typed that ends inside a call is read with its brackets closed after the end
 *   (offsets do not move), so the literals typed so far are read and nothing is reported.
 * - Decorators are TypeScript 5's standard ones (on classes, members and auto-accessors), read
 *   with Babel's `decorators` and `decoratorAutoAccessors` plugins.
 */
import type { parse as BabelParse, ParserOptions } from '@babel/parser';
import { babelParser } from '../../deferredLibraries';
import type { Span } from '../../problems';

export type Program = ReturnType<typeof BabelParse>['program'];
export type Statement = Program['body'][number];

/*
 * Babel's node types, derived from what `parse` returns (so no import of @babel/types, which is
 * not a dependency of ours): each is a union discriminated by `type`, so a check of `type`
 * narrows a node without a cast.
 */
export type Of<Union, Type extends string> = Extract<Union, { type: Type }>;
export type VariableDeclarator = Of<Statement, 'VariableDeclaration'>['declarations'][number];
export type Expression = NonNullable<VariableDeclarator['init']>;
export type CallExpression = Of<Expression, 'CallExpression' | 'OptionalCallExpression'>;
export type ObjectMember = Of<Expression, 'ObjectExpression'>['properties'][number];
export type ObjectProperty = Of<ObjectMember, 'ObjectProperty'>;
/** What {@link Converter.convert} is given: an argument, a property value or an array element. */
export type ValueNode = CallExpression['arguments'][number] | ObjectProperty['value'] | ObjectMember;
/** The nodes whose name {@link nameOf} reads. */
export type NameNode = CallExpression['callee'] | Of<ObjectMember, 'ObjectProperty' | 'ObjectMethod'>['key'] | Of<Statement, 'ImportDeclaration'>['specifiers'][number]['local'] | Of<Expression, 'MemberExpression'>['property'] | ValueNode | VariableDeclarator['id'];
/** Any node, as far as the walk over the tree needs to know it. */
export interface WalkNode {
  readonly type: string;
}
/** Where a node is: every Babel node has `start` and `end`. */
export interface Located {
  readonly start?: number | null;
  readonly end?: number | null;
}

export interface UnreadableRegion {
  readonly span: Span;
  /** The parser's own words about the syntax error, or why the part was not read. */
  readonly reason: string;
  /** The whole module was not read: it is over the size limit. */
  readonly tooLarge?: boolean;
}

export interface ParsedModule {
  /** Every top-level statement read, in order of position. */
  readonly statements: readonly Statement[];
  readonly unreadable: readonly UnreadableRegion[];
}

function parserOptions(jsx: boolean, startIndex = 0): ParserOptions {
  return {
    sourceType: 'unambiguous',
    errorRecovery: true,
    // Comments are never read (only literals are), and attaching them to nodes is a quarter of
    // the parse time of a large module.
    attachComment: false,
    allowImportExportEverywhere: true,
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
    allowUndeclaredExports: true,
    allowNewTargetOutsideFunction: true,
    allowSuperOutsideMethod: true,
    startIndex,
    plugins: [...(jsx ? (['typescript', 'jsx'] as const) : (['typescript'] as const)), ['decorators', {}], 'decoratorAutoAccessors'],
  };
}

/** Why a parse failed, in words for the user. */
function failureReason(error: unknown): string {
  if (error instanceof RangeError) return 'the code is nested too deeply for the parser';
  return error instanceof Error ? error.message.replace(/\s*\(\d+:\d+\)$/, '') : 'syntax error';
}

type Attempt = { readonly statements: readonly Statement[] } | { readonly error: unknown };

function attempt(text: string, jsx: boolean, startIndex: number): Attempt {
  try {
    return { statements: babelParser().parse(text, parserOptions(jsx, startIndex)).program.body };
  } catch (error) {
    return { error };
  }
}

/**
 * Parses `text` (the part of a module that starts at `startIndex`) with JSX as `jsx` says, and
 * for `.js` files (`retryWithoutJsx`) once more without it: TypeScript-only syntax such as `<T>x`
 * reads as JSX. When the part ends the module (`endsModule`), a file being typed that ends inside
 * a call gets its brackets closed.
 */
function parsePart(text: string, jsx: boolean, retryWithoutJsx: boolean, startIndex: number, endsModule: boolean): Attempt {
  let result = attempt(text, jsx, startIndex);
  if ('error' in result && retryWithoutJsx) {
    const plain = attempt(text, false, startIndex);
    if (!('error' in plain)) return plain;
  }
  // Only an error at the very end of the module is a file being typed; closing brackets there keeps offsets.
  if ('error' in result && endsModule && atEnd(result.error, text, startIndex)) {
    const closers = closingBrackets(text);
    if (closers) {
      const closed = attempt(text + closers, jsx, startIndex);
      if (!('error' in closed)) result = closed;
    }
  }
  return result;
}

/** True when a syntax error Babel threw is at the end of `text` (its `pos`, counted from `startIndex`). */
function atEnd(error: unknown, text: string, startIndex: number): boolean {
  const position = typeof error === 'object' && error !== null && 'pos' in error && typeof error.pos === 'number' ? error.pos : undefined;
  return position !== undefined && position - startIndex >= text.trimEnd().length;
}

/** Parses a module (see the contract at the top). `babelParser()` is called outside any catch: a broken install fails loudly. */
export function parseModule(text: string, jsx: boolean, retryWithoutJsx: boolean): ParsedModule {
  babelParser();
  const whole = parsePart(text, jsx, retryWithoutJsx, 0, true);
  if (!('error' in whole)) return { statements: whole.statements, unreadable: [] };
  const statements: Statement[] = [];
  const unreadable: UnreadableRegion[] = [];
  for (const part of topLevelParts(text)) {
    const read = parsePart(text.slice(part.offset, part.offset + part.length), jsx, retryWithoutJsx, part.offset, part.offset + part.length === text.length);
    if ('error' in read) unreadable.push({ span: trimmed(text, part), reason: failureReason(read.error) });
    else statements.push(...read.statements);
  }
  return { statements, unreadable };
}

/** True when the line that starts at `lineStart` starts a statement: code at column 0 that is not a line comment. */
function startsStatement(text: string, lineStart: number): boolean {
  return /^[A-Za-z_$@/]/.test(text.slice(lineStart, lineStart + 1)) && !text.startsWith('//', lineStart);
}

/** The module cut at every line that starts a statement: the parts together are the whole text. */
export function topLevelParts(text: string): Span[] {
  const parts: Span[] = [];
  let start = 0;
  for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', newline + 1)) {
    if (newline + 1 < text.length && startsStatement(text, newline + 1)) {
      parts.push({ offset: start, length: newline + 1 - start });
      start = newline + 1;
    }
  }
  if (start < text.length) parts.push({ offset: start, length: text.length - start });
  return parts;
}

/** The span without the whitespace at its end (a region ends where its code does). */
function trimmed(text: string, span: Span): Span {
  let end = span.offset + span.length;
  while (end > span.offset + 1 && /\s/.test(text[end - 1]!)) end--;
  return { offset: span.offset, length: Math.max(1, end - span.offset) };
}

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * The brackets that close what is still open at the end of `text` (a file being typed), or
 * undefined when the end is inside a string, template or comment (a closed copy would give a
 * literal that runs past the text). Strings, templates and comments are skipped roughly; a
 * regular expression literal with a quote in it makes the answer wrong, which only costs the
 * attempt: the parser still decides.
 */
function closingBrackets(text: string): string | undefined {
  const stack: string[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '/' && text[index + 1] === '/') {
      const end = text.indexOf('\n', index);
      if (end < 0) break;
      index = end;
    } else if (char === '/' && text[index + 1] === '*') {
      const end = text.indexOf('*/', index + 2);
      if (end < 0) return undefined;
      index = end + 1;
    } else if (char === "'" || char === '"' || char === '`') {
      let end = index + 1;
      while (end < text.length && text[end] !== char && (char === '`' || text[end] !== '\n')) end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length || text[end] !== char) return undefined;
      index = end;
    } else if (CLOSER[char]) {
      stack.push(CLOSER[char]!);
    } else if (char === ')' || char === ']' || char === '}') {
      stack.pop();
    }
  }
  return stack.length > 0 ? stack.reverse().join('') : undefined;
}
