/**
 * A look at the bytes a server sent, before any JSON reader decides what they mean.
 *
 * `JSON.parse` (and so the SDK) keeps the last of two members with the same name, and other
 * readers keep the first: a tool served as `{"description": "sends your files away",
 * "description": "Reads a file."}` would be hashed and verified as whatever one reader chose, while
 * another (the agent's runtime) may see the other text. Lone UTF-16 surrogates (`"\ud800"`) are
 * another place where readers disagree. This scan finds both, with the JSON path of each, so the
 * caller can refuse to call such a tool verified.
 */
import { type JSONPath, visit } from 'jsonc-parser';
import { isRecord } from '../core/json/values';

export interface WireFinding {
  /** Where: the path of the object that has the member twice, or of the string with the surrogate. */
  readonly path: JSONPath;
  /** The member that appears twice, or that holds (or is) a string with a lone surrogate. */
  readonly member: string;
  readonly kind: 'duplicate-member' | 'lone-surrogate';
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The duplicate members and lone surrogates in one JSON text; empty for clean text. Never throws. */
export function scanJsonText(text: string, limit = 100): WireFinding[] {
  const findings: WireFinding[] = [];
  const members: Array<Set<string>> = [];
  try {
    visit(text, {
      onObjectBegin: () => {
        members.push(new Set());
      },
      onObjectEnd: () => {
        members.pop();
      },
      onObjectProperty: (property, _offset, _length, _line, _character, pathSupplier) => {
        if (findings.length >= limit) return;
        const seen = members[members.length - 1];
        if (seen?.has(property)) findings.push({ path: pathSupplier(), member: property, kind: 'duplicate-member' });
        seen?.add(property);
        if (LONE_SURROGATE.test(property)) findings.push({ path: pathSupplier(), member: property, kind: 'lone-surrogate' });
      },
      onLiteralValue: (value, _offset, _length, _line, _character, pathSupplier) => {
        if (findings.length >= limit || typeof value !== 'string' || !LONE_SURROGATE.test(value)) return;
        const path = pathSupplier();
        findings.push({ path: path.slice(0, -1), member: String(path[path.length - 1] ?? ''), kind: 'lone-surrogate' });
      },
    });
  } catch {
    // jsonc-parser does not throw on bad input; this is only a guard for the contract above.
  }
  return findings;
}

/** A finding as a user reads it, e.g. `the member "description" appears twice`. */
export function describeWireFinding(finding: WireFinding): string {
  const at = finding.path.length > 0 ? ` (at /${finding.path.join('/')})` : '';
  return finding.kind === 'duplicate-member'
    ? `the member "${finding.member}" appears twice in the server's answer${at}, and JSON readers disagree on which one counts`
    : `the member "${finding.member}" holds a lone UTF-16 surrogate${at}, which is not valid Unicode and reads differently in different readers`;
}

/**
 * The tools of one JSON-RPC message text (a tools/list answer) whose bytes hold a duplicate member
 * or a lone surrogate: (last-wins) tool name and the reason. Empty for clean text; never throws.
 */
export function toolFindingsOf(text: string): Array<[string, string]> {
  const findings = scanJsonText(text);
  if (findings.length === 0) return [];
  let tools: unknown;
  try {
    const parsed: unknown = JSON.parse(text);
    const answer = isRecord(parsed) ? parsed.result : undefined;
    tools = isRecord(answer) ? answer.tools : undefined;
  } catch {
    return [];
  }
  if (!Array.isArray(tools)) return [];
  const result = new Map<string, string>();
  for (const finding of findings) {
    const [first, second, index] = finding.path;
    if (first !== 'result' || second !== 'tools' || typeof index !== 'number') continue;
    const tool: unknown = tools[index];
    const name = isRecord(tool) ? tool.name : undefined;
    if (typeof name !== 'string' || result.has(name)) continue;
    result.set(name, describeWireFinding({ ...finding, path: finding.path.slice(3) }));
  }
  return [...result];
}

/**
 * An HTTP response whose body passes through unchanged while each JSON-RPC message in it (a JSON
 * body, or each `data:` of an event stream) is scanned with {@link toolFindingsOf} before the SDK
 * reads it, so the findings are known when the SDK resolves the request.
 */
export function scanningResponse(response: Response, found: (tool: string, reason: string) => void): Response {
  const type = response.headers.get('content-type') ?? '';
  const stream = type.includes('text/event-stream');
  if (!response.body || (!stream && !type.includes('json'))) return response;
  const decoder = new TextDecoder();
  let text = '';
  let data: string[] = [];
  // An event stream's unfinished line, in the pieces it arrived in: each piece is searched for a
  // line feed once and joined only when its line ends (searching and re-joining the whole line at
  // every chunk was quadratic in the length of a huge event).
  let partial: string[] = [];
  const report = (message: string): void => {
    for (const [tool, reason] of toolFindingsOf(message)) found(tool, reason);
  };
  const line = (complete: string): void => {
    const trimmed = complete.endsWith('\r') ? complete.slice(0, -1) : complete;
    if (trimmed === '') {
      if (data.length > 0) report(data.join('\n'));
      data = [];
    } else if (trimmed.startsWith('data:')) data.push(trimmed.slice(trimmed.startsWith('data: ') ? 6 : 5));
  };
  const lines = (piece: string, final: boolean): void => {
    let start = 0;
    for (let newline = piece.indexOf('\n'); newline !== -1; newline = piece.indexOf('\n', start)) {
      partial.push(piece.slice(start, newline));
      line(partial.join(''));
      partial = [];
      start = newline + 1;
    }
    if (start < piece.length) partial.push(start === 0 ? piece : piece.slice(start));
    if (final && partial.length > 0) line(partial.join(''));
    if (final && data.length > 0) report(data.join('\n'));
  };
  const scanner = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const piece = decoder.decode(chunk, { stream: true });
      if (stream) lines(piece, false);
      else text += piece;
      controller.enqueue(chunk);
    },
    flush() {
      const piece = decoder.decode();
      if (stream) lines(piece, true);
      else report(text + piece);
    },
  });
  return new Response(response.body.pipeThrough(scanner), { status: response.status, statusText: response.statusText, headers: response.headers });
}
