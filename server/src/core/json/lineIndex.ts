/**
 * Offset ↔ line/character conversion for the CLI and reports. Lines and characters are 0-based and
 * characters count UTF-16 code units, as in LSP; the CLI prints them 1-based.
 */
export interface Position {
  readonly line: number;
  readonly character: number;
}

export class LineIndex {
  private readonly lineStarts: number[];

  constructor(private readonly text: string) {
    this.lineStarts = [0];
    // Lines end at LF, CR or CRLF. A text without CR (nearly every file) is split with indexOf,
    // which searches natively: the character loop below was a fortieth of a cold check's CPU
    // over 4 MB of files (issue 13), most of it before V8 optimized the loop.
    if (text.indexOf('\r') < 0) {
      for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) this.lineStarts.push(index + 1);
      return;
    }
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code === 13 /* \r */) {
        if (text.charCodeAt(index + 1) === 10) index++;
        this.lineStarts.push(index + 1);
      } else if (code === 10 /* \n */) {
        this.lineStarts.push(index + 1);
      }
    }
  }

  /** The position of an offset; offsets past the end clamp to the end of the text. */
  positionAt(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.lineStarts[middle] ?? 0) <= clamped) low = middle;
      else high = middle - 1;
    }
    return { line: low, character: clamped - (this.lineStarts[low] ?? 0) };
  }

  /** The offset of a position; positions past a line's end clamp to it. */
  offsetAt(position: Position): number {
    if (position.line < 0) return 0;
    const start = this.lineStarts[position.line];
    if (start === undefined) return this.text.length;
    const next = this.lineStarts[position.line + 1] ?? this.text.length;
    return Math.min(start + Math.max(0, position.character), next);
  }
}
