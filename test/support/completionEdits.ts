/**
 * Applies a completion item to a document the way VS Code does, and judges the result.
 *
 * VS Code takes an item's `textEdit`; a single range replaces the same text in both of its
 * suggest modes, an insert/replace pair replaces up to the cursor ("insert", VS Code's global
 * default) or the whole range ("replace"). VS Code's JSON language features client splits every
 * single range that reaches past the cursor into such a pair (the middleware in its jsonClient),
 * so for items of the JSON language service the mode decides what is replaced. Snippet text is
 * expanded: placeholders keep their default text and the cursor goes to the first tab stop.
 */
import { findNodeAtOffset, type Node, parse, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';

export type SuggestMode = 'insert' | 'replace';

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}

/** The fields of an LSP completion item that decide its edit. */
export interface EditableItem {
  label: string;
  insertText?: string;
  insertTextFormat?: number;
  textEdit?: { range: Range; newText: string } | { insert: Range; replace: Range; newText: string };
}

export function offsetAt(text: string, position: Position): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let line = 0; line < position.line; line++) offset += lines[line]!.length + 1;
  return offset + position.character;
}

export function positionAt(text: string, offset: number): Position {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length - 1, character: before[before.length - 1]!.length };
}

/**
 * Expands LSP snippet syntax: `$1`, `${1}`, `${1:default}` (nested), `${1|a,b|}` and `$0`, with
 * `\$`, `\}` and `\\` escapes. Returns the text and where the cursor lands: the lowest tab stop
 * above 0, else `$0`, else the end.
 */
export function expandSnippet(snippet: string): { text: string; cursor: number } {
  let text = '';
  const stops = new Map<number, number>();
  let index = 0;
  const parseUntil = (closing: string | undefined): void => {
    while (index < snippet.length) {
      const character = snippet[index]!;
      if (closing !== undefined && character === closing) return;
      if (character === '\\' && index + 1 < snippet.length && '$}\\,|'.includes(snippet[index + 1]!)) {
        text += snippet[index + 1];
        index += 2;
        continue;
      }
      if (character === '$') {
        const simple = /^\$(\d+)/.exec(snippet.slice(index));
        if (simple) {
          const stop = Number(simple[1]);
          if (!stops.has(stop)) stops.set(stop, text.length);
          index += simple[0].length;
          continue;
        }
        const braced = /^\$\{(\d+)([:|}])/.exec(snippet.slice(index));
        if (braced) {
          const stop = Number(braced[1]);
          if (!stops.has(stop)) stops.set(stop, text.length);
          index += braced[0].length;
          if (braced[2] === ':') {
            parseUntil('}');
            index++;
          } else if (braced[2] === '|') {
            const end = snippet.indexOf('|}', index);
            text += snippet.slice(index, end).split(',')[0];
            index = end + 2;
          }
          continue;
        }
      }
      text += character;
      index++;
    }
  };
  parseUntil(undefined);
  const positive = [...stops.keys()].filter((stop) => stop > 0).sort((a, b) => a - b);
  const cursor = positive.length > 0 ? stops.get(positive[0]!)! : (stops.get(0) ?? text.length);
  return { text, cursor };
}

export interface AppliedCompletion {
  text: string;
  /** The cursor's offset in `text` after the edit. */
  cursor: number;
  /** The replaced range's start, in the original text (also where the new text starts). */
  start: number;
}

/**
 * Applies `item` at `offset` in `mode`. `jsonClient` says whether VS Code's JSON language features
 * client delivered the item (it splits a range that reaches past the cursor into insert/replace).
 */
export function applyCompletion(text: string, offset: number, item: EditableItem, mode: SuggestMode, jsonClient: boolean): AppliedCompletion {
  if (!item.textEdit) throw new Error(`item ${JSON.stringify(item.label)} has no textEdit; VS Code would guess the word range`);
  let insert: Range;
  let replace: Range;
  if ('range' in item.textEdit) {
    const range = item.textEdit.range;
    const end = offsetAt(text, range.end);
    const start = offsetAt(text, range.start);
    if (jsonClient && end > offset && start <= offset) {
      insert = { start: range.start, end: positionAt(text, offset) };
      replace = range;
    } else {
      insert = replace = range;
    }
  } else {
    insert = item.textEdit.insert;
    replace = item.textEdit.replace;
  }
  const range = mode === 'insert' ? insert : replace;
  const start = offsetAt(text, range.start);
  const end = offsetAt(text, range.end);
  if (start > offset || end < offset) throw new Error(`item ${JSON.stringify(item.label)}: its range ${start}-${end} does not contain the cursor ${offset}`);
  const expanded = item.insertTextFormat === 2 ? expandSnippet(item.textEdit.newText) : { text: item.textEdit.newText, cursor: item.textEdit.newText.length };
  return { text: text.slice(0, start) + expanded.text + text.slice(end), cursor: start + expanded.cursor, start };
}

/** The JSONC syntax errors of `text` (comments allowed, trailing commas not), as readable strings. */
export function syntaxErrors(text: string): string[] {
  const errors: ParseError[] = [];
  parse(text, errors, { allowTrailingComma: false, disallowComments: false });
  return errors.map((error) => `${printParseErrorCode(error.error)} at ${error.offset}`);
}

/**
 * Why the cursor is not inside a value after a completion, or undefined when it is: the node at
 * the cursor (the right edge counts) must be a value, not a property key, and must lie in the
 * inserted text.
 */
export function cursorProblem(applied: AppliedCompletion): string | undefined {
  const root = parseTree(applied.text, [], { allowTrailingComma: false, disallowComments: false });
  if (!root) return 'the document does not parse';
  const node: Node | undefined = findNodeAtOffset(root, applied.cursor, true);
  if (!node) return `no node at the cursor ${applied.cursor}`;
  if (node.parent?.type === 'property' && node.parent.children?.[0] === node) return `the cursor ${applied.cursor} is in a property key`;
  if (node.type === 'property') return `the cursor ${applied.cursor} is between a key and its value`;
  if (node.offset + node.length < applied.start) return `the cursor ${applied.cursor} is in a value before the edit`;
  return undefined;
}

/** Marks the cursor in a document: `text` with `|` removed, and the offset where it was. */
export function marked(document: string): { text: string; offset: number } {
  const offset = document.indexOf('|');
  if (offset < 0 || document.indexOf('|', offset + 1) >= 0) throw new Error(`a case marks the cursor with exactly one "|": ${document}`);
  return { text: document.slice(0, offset) + document.slice(offset + 1), offset };
}
