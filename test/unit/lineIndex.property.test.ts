/**
 * core/json/lineIndex.ts against a line split written the plain way: for any text of LF, CR, CRLF
 * and other characters, every offset has the line and character of that split (a CRLF is one line
 * break; characters count UTF-16 code units), and `offsetAt` gives the offset back wherever an
 * offset is not between the CR and LF of a CRLF. Texts with and without CR take the two paths of
 * the constructor.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { LineIndex } from '../../server/src/core/json/lineIndex';

/** Line starts found one character at a time. */
function plainLineStarts(text: string): number[] {
  const starts = [0];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\r' && text[index + 1] === '\n') {
      starts.push(index + 2);
      index++;
    } else if (text[index] === '\r' || text[index] === '\n') {
      starts.push(index + 1);
    }
  }
  return starts;
}

const textOf = (pieces: readonly string[]) => fc.array(fc.constantFrom(...pieces), { maxLength: 80 }).map((parts) => parts.join(''));
const withCarriageReturns = textOf(['a', 'bc', '\n', '\r', '\r\n', '\n\r', 'é', '😀', ' ']);
const lineFeedsOnly = textOf(['a', 'bc', '\n', '\n\n', 'é', '😀', ' ']);

function assertAgrees(text: string): void {
  const starts = plainLineStarts(text);
  const index = new LineIndex(text);
  for (let offset = 0; offset <= text.length; offset++) {
    let line = 0;
    while (line + 1 < starts.length && starts[line + 1]! <= offset) line++;
    assert.deepEqual(index.positionAt(offset), { line, character: offset - starts[line]! }, `offset ${offset} of ${JSON.stringify(text)}`);
    const insideCrlf = text[offset - 1] === '\r' && text[offset] === '\n';
    if (!insideCrlf) assert.equal(index.offsetAt(index.positionAt(offset)), offset);
  }
  assert.deepEqual(index.positionAt(text.length + 5), index.positionAt(text.length), 'offsets past the end clamp');
}

describe('LineIndex', () => {
  test('texts with CR, LF and CRLF', () => {
    fc.assert(fc.property(withCarriageReturns, assertAgrees), { numRuns: 1000 });
  });
  test('texts with LF only', () => {
    fc.assert(fc.property(lineFeedsOnly, assertAgrees), { numRuns: 1000 });
  });
  test('by hand', () => {
    for (const text of ['', '\n', '\r', '\r\n', 'a\r\nb\nc\rd', '\n\n\n', 'no break']) assertAgrees(text);
    assert.deepEqual(new LineIndex('a\nb\r\nc').positionAt(5), { line: 2, character: 0 });
  });
});
