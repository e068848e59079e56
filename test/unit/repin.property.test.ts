/**
 * Property tests for the fixes of core/documents/fixes.ts on random, valid JSONC documents.
 *
 * The generator writes blueprint and connector files the way people do: comments (`//` and
 * `/* *\/`) between any two tokens, odd spacing, LF and CRLF, tabs or spaces, trailing commas,
 * keys in any order, strings with `\u` escapes, several steps or instances (a single connector,
 * an array of them, and the `{"connectors": [...]}` stack form), prefixed and bare tool pins. Every
 * generated document is checked to analyze without a single problem before a property uses it.
 *
 * The properties:
 *   (a) a re-pin (`replacePinEdit`) changes only the bytes of that pin: the text before and after
 *       its span is byte-identical, and the document analyzes to the same model except that pin
 *       (spans after it shifted by the length difference);
 *   (b) the re-pin a verification offers writes the live pin in the entry's own style
 *       (`formatPin(algorithm, hex, parsed.style)`): bare tool pins stay bare, prefixed ones stay
 *       prefixed, and after applying them every pin verifies;
 *   (c) `setSnapshotEntryEdits` / `removeSnapshotEntryEdits` keep every comment of the document
 *       (count, content and order; a removal may drop only the comments inside the removed
 *       member itself), leave no TP100/TP101, and the snapshot then has exactly the expected keys;
 *   (d) `applyTextEdits` of the combined edits of several re-pins equals applying them one by one
 *       (re-analyzing the document between steps), in any order of the edit list.
 *
 * Cases found by these properties are kept below as regular tests, with the minimal input.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { createScanner, SyntaxKind } from 'jsonc-parser';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { analyzeConnector, type ConnectorInstanceModel, type ConnectorModel } from '../../server/src/core/documents/connector';
import { analyzeDocument, type DocumentAnalysis, type DocumentKind } from '../../server/src/core/documents/documents';
import { applyTextEdits, removeSnapshotEntryEdits, replacePinEdit, setSnapshotEntryEdits } from '../../server/src/core/documents/fixes';
import type { CollectedListing, ListedTool } from '../../server/src/core/verify/listing';
import { formatPin, isParsedPin, type ParsedPin, parsePin, type PinAlgorithm, type PinStyle } from '../../server/src/core/pins/pins';
import type { Span } from '../../server/src/core/problems';
import { connectorServers, ServerRegistry } from '../../server/src/core/verify/registry';
import { verifyConnector } from '../../server/src/core/verify/verify';

const RUNS = 500;
const CONNECTOR_FILE = 'flows/tools.connector.jsonc';

// ---------------------------------------------------------------------------------------------
// Layout: the trivia between tokens, trailing commas, escapes

const eol = fc.constantFrom('\n', '\r\n');
// Comment text that looks like JSON and like pins, so a fix that scans text naively would trip.
const commentUnit = fc.constantFrom('a', 'z', ' ', '"', '{', '}', '[', ']', ',', ':', '/', '*', '\t', 'é', '😀', 'sha256:', 'fnv1a64:', 'toolsSnapshot', '"x": "y",');
const lineComment = fc.tuple(fc.string({ unit: commentUnit, maxLength: 6 }), eol).map(([body, end]) => `//${body}${end}`);
const blockComment = fc
  .string({ unit: fc.oneof(commentUnit, eol), maxLength: 6 })
  .map((body) => body.split('*/').join('* /'))
  .map((body) => `/*${body}*/`);
const whitespace = fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', '\n  ', '\n    ', '\r\n\t', '\n\t\t', '\r\n  ');
const triviaPiece = fc.oneof({ weight: 4, arbitrary: whitespace }, { weight: 1, arbitrary: lineComment }, { weight: 1, arbitrary: blockComment });
const trivia = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 4, arbitrary: fc.array(triviaPiece, { minLength: 1, maxLength: 3 }).map((pieces) => pieces.join('')) });

interface Layout {
  readonly trivia: readonly string[];
  readonly trailing: readonly boolean[];
  readonly escape: readonly boolean[];
}

const layoutArb: fc.Arbitrary<Layout> = fc.record({
  trivia: fc.array(trivia, { minLength: 1, maxLength: 40 }),
  trailing: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
  escape: fc.array(fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }), { minLength: 1, maxLength: 8 }),
});

/** A JSON value to write: an object (members in writing order), an array, a string or raw text. */
type Json = { readonly obj: ReadonlyArray<readonly [string, Json]> } | { readonly arr: readonly Json[] } | { readonly str: string } | { readonly raw: string };

class Writer {
  private t = 0;
  private c = 0;
  private e = 0;
  constructor(private readonly layout: Layout) {}

  ws(): string {
    return this.layout.trivia[this.t++ % this.layout.trivia.length]!;
  }

  trailingComma(): boolean {
    return this.layout.trailing[this.c++ % this.layout.trailing.length]!;
  }

  string(value: string): string {
    const escapeFirst = this.layout.escape[this.e++ % this.layout.escape.length]!;
    if (!escapeFirst || value.length === 0) return JSON.stringify(value);
    return `"\\u${value.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(value.slice(1)).slice(1)}`;
  }

  value(json: Json): string {
    if ('raw' in json) return json.raw;
    if ('str' in json) return this.string(json.str);
    if ('arr' in json) {
      if (json.arr.length === 0) return `[${this.ws()}]`;
      let out = '[';
      json.arr.forEach((item, index) => {
        out += this.ws() + this.value(item) + this.ws();
        if (index < json.arr.length - 1 || this.trailingComma()) out += ',';
      });
      return `${out}${this.ws()}]`;
    }
    if (json.obj.length === 0) return `{${this.ws()}}`;
    let out = '{';
    json.obj.forEach(([key, value], index) => {
      out += `${this.ws()}${this.string(key)}${this.ws()}:${this.ws()}${this.value(value)}${this.ws()}`;
      if (index < json.obj.length - 1 || this.trailingComma()) out += ',';
    });
    return `${out}${this.ws()}}`;
  }

  document(json: Json): string {
    return this.ws() + this.value(json) + this.ws();
  }
}

/** Orders members by random ranks, so keys come in any order. */
function ordered(members: ReadonlyArray<readonly [string, Json] | undefined>, ranks: readonly number[]): Array<readonly [string, Json]> {
  return members
    .map((member, index) => ({ member, rank: ranks[index % ranks.length]! * 16 + index }))
    .filter((entry): entry is { member: readonly [string, Json]; rank: number } => entry.member !== undefined)
    .sort((a, b) => a.rank - b.rank)
    .map((entry) => entry.member);
}

const hexOf = (length: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
const ranks = fc.array(fc.nat(7), { minLength: 8, maxLength: 8 });
const toolName = fc.oneof(
  fc.constantFrom('create_issue', 'add_labels', 'echo_upper', 'read_file', 'search'),
  fc.string({ unit: fc.constantFrom(...'abcxyz_-./019é'.split(''), '😀', ' '), minLength: 1, maxLength: 10 }),
);
const prose = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '"', '\\', '/', '*', '\n', 'é', '{'), maxLength: 12 });

// ---------------------------------------------------------------------------------------------
// Blueprints

const argumentsArb = fc
  .record({
    text: fc.option(fc.constantFrom('Inbound: {{event.subject}}', 'hi'), { nil: undefined }),
    count: fc.option(fc.integer({ min: -5, max: 500 }), { nil: undefined }),
    flag: fc.option(fc.boolean(), { nil: undefined }),
    secretRef: fc.boolean(),
    nested: fc.boolean(),
  })
  .map((args): Json => ({
    obj: [
      ...(args.text !== undefined ? [['text', { str: args.text }] as const] : []),
      ...(args.count !== undefined ? [['count', { raw: String(args.count) }] as const] : []),
      ...(args.flag !== undefined ? [['flag', { raw: String(args.flag) }] as const] : []),
      ...(args.secretRef ? [['token', { obj: [['$secret', { str: 'GITHUB_TOKEN' }]] }] as const] : []),
      ...(args.nested ? [['labels', { arr: [{ str: 'bug' }, { raw: 'null' }, { obj: [['a', { arr: [] }]] }] }] as const] : []),
    ],
  }));

const stepArb = fc.record({
  mcp: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  effect: fc.constantFrom('notify.owner', 'http.call'),
  tool: toolName,
  hex: hexOf(16),
  server: fc.option(fc.constantFrom('github_tools', 'demo'), { nil: undefined }),
  args: fc.option(argumentsArb, { nil: undefined }),
  description: fc.option(prose, { nil: undefined }),
  schemaDrift: fc.option(fc.nat(), { nil: undefined }),
  toolNotFound: fc.option(fc.nat(), { nil: undefined }),
  ranks,
  inputRanks: ranks,
});

const blueprintArb = fc
  .record({
    name: fc.constantFrom('triage-inbound-issue', 'shout', 'n'),
    description: fc.option(prose, { nil: undefined }),
    schema: fc.boolean(),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 6 }),
    ids: fc.uniqueArray(fc.string({ unit: fc.constantFrom(...'abz-#09'.split('')), minLength: 1, maxLength: 6 }), { minLength: 6, maxLength: 6 }),
    ranks,
  })
  .map((spec): Json => {
    const steps = spec.steps.map((step, index): Json => {
      const target = (pick: number | undefined): string | undefined => (pick === undefined ? undefined : spec.ids[pick % spec.steps.length]!);
      const channels = [
        ...(target(step.schemaDrift) !== undefined ? [['schemaDrift', { str: target(step.schemaDrift)! }] as const] : []),
        ...(target(step.toolNotFound) !== undefined ? [['toolNotFound', { str: target(step.toolNotFound)! }] as const] : []),
      ];
      const input: Json | undefined = step.mcp
        ? {
            obj: ordered(
              [
                ['toolName', { str: step.tool }],
                ['expectedSchemaHash', { str: `fnv1a64:${step.hex}` }],
                step.server !== undefined ? ['server', { str: step.server }] : undefined,
                step.args !== undefined ? ['arguments', step.args] : undefined,
              ],
              step.inputRanks,
            ),
          }
        : undefined;
      return {
        obj: ordered(
          [
            ['id', { str: spec.ids[index]! }],
            ['effect', { str: step.mcp ? 'mcp.invoke' : step.effect }],
            input ? ['input', input] : undefined,
            step.mcp && channels.length > 0 ? ['on', { obj: channels }] : undefined,
            step.description !== undefined ? ['description', { str: step.description }] : undefined,
          ],
          step.ranks,
        ),
      };
    });
    return {
      obj: ordered(
        [
          spec.schema ? ['$schema', { str: '../schemas/blueprint.schema.json' }] : undefined,
          ['blueprint', { str: spec.name }],
          ['formatVersion', { raw: '1' }],
          spec.description !== undefined ? ['description', { str: spec.description }] : undefined,
          ['steps', { arr: steps }],
        ],
        spec.ranks,
      ),
    };
  });

// ---------------------------------------------------------------------------------------------
// Connectors

const snapshotEntryArb = fc.record({ tool: toolName, hex: hexOf(64), style: fc.constantFrom<PinStyle>('prefixed', 'bare') });

const instanceArb = fc.record({
  mcp: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  http: fc.boolean(),
  snapshot: fc.option(fc.uniqueArray(snapshotEntryArb, { selector: (entry) => entry.tool, maxLength: 5 }), { nil: undefined, freq: 4 }),
  includeExtra: fc.option(fc.uniqueArray(toolName, { maxLength: 3 }), { nil: undefined }),
  label: fc.option(prose, { nil: undefined }),
  auth: fc.boolean(),
  env: fc.boolean(),
  ranks,
  configRanks: ranks,
  transportRanks: ranks,
});

type ConnectorForm = 'single' | 'array' | 'stack';

const connectorArb = fc
  .record({
    form: fc.constantFrom<ConnectorForm>('single', 'array', 'stack'),
    instances: fc.array(instanceArb, { minLength: 1, maxLength: 4 }),
    names: fc.uniqueArray(fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/), { minLength: 4, maxLength: 4 }),
    schema: fc.boolean(),
  })
  .map((spec): Json => {
    const chosen = spec.form === 'single' ? spec.instances.slice(0, 1) : spec.instances;
    const instances = chosen.map((instance, index): Json => {
      const transport: Json = instance.http
        ? { obj: ordered([['kind', { str: 'http' }], ['url', { str: 'https://mcp.example.com/mcp' }], ['headers', { obj: [['X-Team', { str: 'core' }]] }]], instance.transportRanks) }
        : {
            obj: ordered(
              [
                ['kind', { str: 'stdio' }],
                ['command', { str: 'node' }],
                ['args', { arr: [{ str: './scripts/mcp-server.mjs' }, { str: '--stdio' }] }],
                instance.env ? ['env', { obj: [['LOG_LEVEL', { str: 'debug' }]] }] : undefined,
              ],
              instance.transportRanks,
            ),
          };
      const pinned = (instance.snapshot ?? []).map((entry) => entry.tool);
      const include = instance.includeExtra === undefined ? undefined : [...new Set([...instance.includeExtra, ...pinned])];
      const config: Json = instance.mcp
        ? {
            obj: ordered(
              [
                ['transport', transport],
                include ? ['include', { arr: include.map((name) => ({ str: name })) }] : undefined,
                instance.snapshot ? ['toolsSnapshot', { obj: instance.snapshot.map((entry) => [entry.tool, { str: formatPin('sha256', entry.hex, entry.style) }] as const) }] : undefined,
              ],
              instance.configRanks,
            ),
          }
        : { obj: [['spec', { str: './openapi.yaml' }]] };
      return {
        obj: ordered(
          [
            ['name', { str: spec.names[index]! }],
            instance.label !== undefined ? ['label', { str: instance.label }] : undefined,
            ['type', { str: 'api' }],
            ['provider', { str: instance.mcp ? 'mcp' : 'openapi' }],
            ['providerConfig', config],
            instance.auth ? ['auth', { obj: [['type', { str: 'bearer' }], ['credentialRef', { str: 'GITHUB_MCP_TOKEN' }]] }] : undefined,
          ],
          instance.ranks,
        ),
      };
    });
    if (spec.form === 'single') return instances[0]!;
    if (spec.form === 'array') return { arr: instances };
    return { obj: [...(spec.schema ? [['$schema', { str: '../schemas/connector.schema.json' }] as const] : []), ['connectors', { arr: instances }]] };
  });

interface Doc {
  readonly kind: DocumentKind;
  readonly text: string;
}

const blueprintDoc: fc.Arbitrary<Doc> = fc.tuple(blueprintArb, layoutArb).map(([json, layout]) => ({ kind: 'blueprint', text: new Writer(layout).document(json) }));
const connectorDoc: fc.Arbitrary<Doc> = fc.tuple(connectorArb, layoutArb).map(([json, layout]) => ({ kind: 'connector', text: new Writer(layout).document(json) }));
const anyDoc = fc.oneof(blueprintDoc, connectorDoc);

/** Analyzes a generated document and insists that it is valid: the generator's own contract. */
function analyzeValid(doc: Doc): DocumentAnalysis {
  const analysis = analyzeDocument(doc.kind, doc.text);
  assert.deepEqual(
    analysis.problems.map((found) => `${found.code} ${found.message}`),
    [],
    `the generator wrote an invalid ${doc.kind}:\n${doc.text}`,
  );
  return analysis;
}

// ---------------------------------------------------------------------------------------------
// Pins, comments and model projections

interface PinSite {
  readonly span: Span;
  readonly algorithm: PinAlgorithm;
  readonly parsed: ParsedPin;
}

/** Every well-formed pin of a document, in document order. */
function pinSites(analysis: DocumentAnalysis): PinSite[] {
  if (analysis.kind === 'blueprint') {
    return analyzeBlueprintModel(analysis).steps.flatMap((step) =>
      step.mcp?.expectedSchemaHash && step.mcp.pin ? [{ span: step.mcp.expectedSchemaHash.span, algorithm: 'fnv1a64' as const, parsed: step.mcp.pin }] : [],
    );
  }
  return (analysis.model as ConnectorModel).instances.flatMap((instance) =>
    instance.snapshot.flatMap((entry) => (entry.parsed ? [{ span: entry.pin.span, algorithm: 'sha256' as const, parsed: entry.parsed }] : [])),
  );
}

function analyzeBlueprintModel(analysis: DocumentAnalysis): ReturnType<typeof analyzeBlueprint>['model'] {
  return analysis.model as ReturnType<typeof analyzeBlueprint>['model'];
}

/** A new pin for a site: schema pins are always prefixed, tool pins in the given style. */
function newPinFor(site: PinSite, hex64: string, style: PinStyle): string {
  return site.algorithm === 'fnv1a64' ? formatPin('fnv1a64', hex64.slice(0, 16), 'prefixed') : formatPin('sha256', hex64, style);
}

interface Comment {
  readonly offset: number;
  readonly text: string;
}

/** Every comment of a JSONC text, by the same scanner the parser uses. */
function commentsOf(text: string): Comment[] {
  const scanner = createScanner(text, false);
  const found: Comment[] = [];
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.LineCommentTrivia || kind === SyntaxKind.BlockCommentTrivia) {
      found.push({ offset: scanner.getTokenOffset(), text: text.slice(scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()) });
    }
  }
  return found;
}

/**
 * A model as plain data: every JSON node and span becomes a span passed through `mapSpan`, so two
 * models can be compared with deepEqual, and spans can be shifted for an expected model.
 */
function project(value: unknown, mapSpan: (span: Span) => Span = (span) => span): unknown {
  if (Array.isArray(value)) return value.map((item) => project(item, mapSpan));
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.offset === 'number' && typeof record.length === 'number') return mapSpan({ offset: record.offset, length: record.length });
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(record)) out[key] = project(member, mapSpan);
    return out;
  }
  return value;
}

/** The shift of spans when `span` is replaced by `delta` more characters. */
function shiftAround(span: Span, delta: number): (candidate: Span) => Span {
  const end = span.offset + span.length;
  return (candidate) => {
    if (candidate.offset >= end) return { offset: candidate.offset + delta, length: candidate.length };
    if (candidate.offset <= span.offset && candidate.offset + candidate.length >= end) return { offset: candidate.offset, length: candidate.length + delta };
    return candidate;
  };
}

/** The projection of `analysis`'s model after the pin at `site` became `newPin` (a JSON literal of `newLength`). */
function expectedAfterRepin(analysis: DocumentAnalysis, site: PinSite, newPin: string, newLength: number): unknown {
  const delta = newLength - site.span.length;
  const expected = project(analysis.model, shiftAround(site.span, delta)) as Record<string, unknown>;
  const parsed = parsePin(newPin, site.algorithm);
  assert.ok(isParsedPin(parsed));
  const newField = { value: newPin, span: { offset: site.span.offset, length: newLength } };
  let patched = 0;
  if (analysis.kind === 'blueprint') {
    analyzeBlueprintModel(analysis).steps.forEach((step, index) => {
      if (step.mcp?.expectedSchemaHash?.span.offset !== site.span.offset) return;
      const mcp = ((expected.steps as Array<Record<string, unknown>>)[index]!.mcp as Record<string, unknown>);
      mcp.expectedSchemaHash = newField;
      mcp.pin = { ...parsed };
      patched++;
    });
  } else {
    (analysis.model as ConnectorModel).instances.forEach((instance, i) => {
      instance.snapshot.forEach((entry, j) => {
        if (entry.pin.span.offset !== site.span.offset) return;
        const projected = ((expected.instances as Array<Record<string, unknown>>)[i]!.snapshot as Array<Record<string, unknown>>)[j]!;
        projected.pin = newField;
        projected.parsed = { ...parsed };
        patched++;
      });
    });
  }
  assert.equal(patched, 1, 'the re-pinned site is exactly one pin of the model');
  return expected;
}

function codes(text: string, kind: DocumentKind): string[] {
  return analyzeDocument(kind, text).problems.map((found) => found.code);
}

// ---------------------------------------------------------------------------------------------
// (a) a re-pin changes only the pin's bytes

describe('re-pin properties', () => {
  test('the generator writes valid blueprints and connectors (with comments, CRLF, trailing commas, escapes)', () => {
    let withComments = 0;
    let withCrlf = 0;
    fc.assert(
      fc.property(anyDoc, (doc) => {
        analyzeValid(doc);
        if (commentsOf(doc.text).length > 0) withComments++;
        if (doc.text.includes('\r\n')) withCrlf++;
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
    // The layout is not degenerate: most documents hold comments and many use CRLF somewhere.
    assert.ok(withComments > RUNS / 2, `${withComments} of ${RUNS} documents had comments`);
    assert.ok(withCrlf > RUNS / 4, `${withCrlf} of ${RUNS} documents had CRLF`);
  });

  test('(a) replacePinEdit changes only that pin: the bytes around it are identical and the model is the same but for that pin', () => {
    fc.assert(
      fc.property(anyDoc, fc.nat(), hexOf(64), fc.constantFrom<PinStyle>('prefixed', 'bare'), (doc, pick, hex, style) => {
        const analysis = analyzeValid(doc);
        const sites = pinSites(analysis);
        fc.pre(sites.length > 0);
        const site = sites[pick % sites.length]!;
        const newPin = newPinFor(site, hex, style);
        const edit = replacePinEdit(site.span, newPin);
        assert.deepEqual({ offset: edit.offset, length: edit.length }, site.span, 'the edit covers exactly the pin literal');
        const result = applyTextEdits(doc.text, [edit]);

        const before = doc.text.slice(0, site.span.offset);
        const after = doc.text.slice(site.span.offset + site.span.length);
        assert.equal(result.slice(0, site.span.offset), before, 'the text before the pin is byte-identical');
        assert.equal(result.slice(result.length - after.length), after, 'the text after the pin is byte-identical');
        assert.equal(result.length, before.length + edit.content.length + after.length);

        const reanalyzed = analyzeDocument(doc.kind, result);
        assert.deepEqual(reanalyzed.problems, [], 'the re-pinned document is still valid');
        assert.deepEqual(project(reanalyzed.model), expectedAfterRepin(analysis, site, newPin, edit.content.length));
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  // -------------------------------------------------------------------------------------------
  // (b) the style of the entry is kept

  test('(b) formatPin keeps the style: a bare pin reads back bare, a prefixed one prefixed', () => {
    fc.assert(
      fc.property(hexOf(64), fc.constantFrom<PinStyle>('prefixed', 'bare'), (hex, style) => {
        const parsed = parsePin(formatPin('sha256', hex, style), 'sha256');
        assert.ok(isParsedPin(parsed));
        assert.deepEqual(parsed, { algorithm: 'sha256', hex, style });
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  test('(b) the drift fix writes the live pin in the entry\'s style: bare stays bare, and afterwards every pin verifies', () => {
    fc.assert(
      fc.property(connectorDoc, prose, (doc, description) => {
        const analysis = analyzeValid(doc);
        const model = analysis.model as ConnectorModel;
        const sites = pinSites(analysis);
        fc.pre(model.instances.some((instance) => instance.provider?.value === 'mcp' && instance.snapshot.length > 0));

        // Every pinned tool is served, with content the random pins cannot match: all drift.
        const verify = (text: string): ReturnType<typeof verifyConnector> => {
          const current = analyzeConnector(text).model;
          const definitions = connectorServers(CONNECTOR_FILE, current, 'workspace');
          const listings = new Map(current.instances.map((instance) => [instance.name?.value, listingOf(instance, description)]));
          return verifyConnector(CONNECTOR_FILE, current, definitions, {
            registry: new ServerRegistry(definitions),
            listingFor: (definition) => ({ status: 'listed', listing: listings.get(definition.name)!, listedAt: 0 }),
            now: 0,
          });
        };
        const first = verify(doc.text);
        const drifted = first.problems.filter((found) => found.code === 'TP400');
        const mcpSites = sites.filter((site) => first.verdicts.some((verdict) => verdict.span.offset === site.span.offset));
        assert.equal(drifted.length, mcpSites.length, 'every pin of an mcp instance drifted');
        for (const found of drifted) {
          const site = mcpSites.find((candidate) => candidate.span.offset === found.span.offset)!;
          assert.ok(site, 'the drift is reported on the pin literal');
          const data = found.data as { live: string; style: PinStyle };
          const live = parsePin(data.live, 'sha256');
          assert.ok(isParsedPin(live), `the fix's pin parses: ${data.live}`);
          assert.equal(data.style, site.parsed.style);
          assert.equal(live.style, site.parsed.style, `a ${site.parsed.style} pin is re-pinned ${site.parsed.style}`);
          assert.equal(data.live, formatPin('sha256', live.hex, site.parsed.style));
        }

        const fixed = applyTextEdits(doc.text, drifted.map((found) => replacePinEdit(found.span, (found.data as { live: string }).live)));
        assert.deepEqual(codes(fixed, 'connector'), []);
        const after = pinSites(analyzeDocument('connector', fixed));
        assert.deepEqual(after.map((site) => site.parsed.style), sites.map((site) => site.parsed.style), 'every entry keeps its style');
        const second = verify(fixed);
        assert.deepEqual(second.problems.filter((found) => found.code === 'TP400'), []);
        assert.ok(second.verdicts.every((verdict) => verdict.state === 'verified'), 'after the fix every pin verifies');
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  // -------------------------------------------------------------------------------------------
  // (c) snapshot entries are added, replaced and removed without losing a comment

  /** Runs property (c) for one kind of snapshot edit on a random mcp instance of a random connector. */
  const snapshotProperty = (operation: 'add' | 'replace' | 'remove'): void => {
    fc.assert(
      fc.property(connectorDoc, fc.nat(), fc.nat(), toolName, hexOf(64), (doc, pickInstance, pickTool, newTool, hex) => {
        const analysis = analyzeValid(doc);
        const instances = (analysis.model as ConnectorModel).instances;
        const candidates = instances.filter((instance) => instance.provider?.value === 'mcp');
        fc.pre(candidates.length > 0);
        const instance = candidates[pickInstance % candidates.length]!;
        const keys = instance.snapshot.map((entry) => entry.tool.value);
        const pin = formatPin('sha256', hex, 'prefixed');
        if (operation === 'add') {
          fc.pre(!keys.includes(newTool));
          const result = applyTextEdits(doc.text, setSnapshotEntryEdits(doc.text, instance, newTool, pin));
          checkSnapshotEdit(doc.text, result, instances, instance, [...keys, newTool], { tool: newTool, pin }, undefined);
          return;
        }
        fc.pre(keys.length > 0);
        const tool = keys[pickTool % keys.length]!;
        if (operation === 'replace') {
          const result = applyTextEdits(doc.text, setSnapshotEntryEdits(doc.text, instance, tool, pin));
          checkSnapshotEdit(doc.text, result, instances, instance, keys, { tool, pin }, undefined);
        } else {
          const result = applyTextEdits(doc.text, removeSnapshotEntryEdits(doc.text, instance, tool));
          checkSnapshotEdit(doc.text, result, instances, instance, keys.filter((key) => key !== tool), undefined, memberSpan(instance, tool));
        }
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  };

  test('(c) setSnapshotEntryEdits adding a new entry keeps every comment, stays valid JSONC and leaves exactly the expected keys', () => snapshotProperty('add'));
  test('(c) setSnapshotEntryEdits replacing an entry keeps every comment, stays valid JSONC and leaves exactly the expected keys', () => snapshotProperty('replace'));
  test('(c) removeSnapshotEntryEdits keeps every comment outside the removed member, stays valid JSONC and leaves exactly the expected keys', () => snapshotProperty('remove'));

  // -------------------------------------------------------------------------------------------
  // (d) combined re-pins equal re-pins one by one

  test('(d) applyTextEdits of several re-pins at once equals applying them one by one, in any order', () => {
    fc.assert(
      fc.property(
        anyDoc,
        fc.array(fc.record({ pick: fc.nat(), hex: hexOf(64), style: fc.constantFrom<PinStyle>('prefixed', 'bare') }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (doc, repins, rotate) => {
          const sites = pinSites(analyzeValid(doc));
          fc.pre(sites.length > 0);
          const chosen = new Map<number, string>();
          for (const repin of repins) {
            const index = repin.pick % sites.length;
            if (!chosen.has(index)) chosen.set(index, newPinFor(sites[index]!, repin.hex, repin.style));
          }
          const edits = [...chosen].map(([index, pin]) => replacePinEdit(sites[index]!.span, pin));
          const combined = applyTextEdits(doc.text, edits);
          const shift = rotate % edits.length;
          assert.equal(applyTextEdits(doc.text, [...edits.slice(shift), ...edits.slice(0, shift)].reverse()), combined, 'the order of the edit list does not matter');

          let oneByOne = doc.text;
          for (const [index, pin] of chosen) {
            const current = pinSites(analyzeDocument(doc.kind, oneByOne));
            assert.equal(current.length, sites.length);
            oneByOne = applyTextEdits(oneByOne, [replacePinEdit(current[index]!.span, pin)]);
          }
          assert.equal(combined, oneByOne);
          assert.deepEqual(codes(combined, doc.kind), []);
          assert.deepEqual(commentsOf(combined).map((comment) => comment.text), commentsOf(doc.text).map((comment) => comment.text));
        },
      ),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });
});

/** The span of the `"tool": pin` member of an instance's snapshot. */
function memberSpan(instance: ConnectorInstanceModel, tool: string): Span {
  const entry = instance.snapshot.find((candidate) => candidate.tool.value === tool)!;
  const member = entry.tool.span.offset;
  return { offset: member, length: entry.pin.span.offset + entry.pin.span.length - member };
}

/** A listing that serves every pinned tool of an instance with a fixed, unpinned description. */
function listingOf(instance: ConnectorInstanceModel, description: string): CollectedListing {
  const tools: ListedTool[] = instance.snapshot.map((entry) => ({
    name: entry.tool.value,
    description: `live: ${description}`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    raw: {},
  }));
  return { tools, malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined };
}

/**
 * The checks of property (c): comments kept (except inside a removed member), no TP100/TP101, the
 * instance's snapshot has exactly `expectedKeys` (and `set.pin` at `set.tool`), and every other
 * instance's snapshot is unchanged.
 */
function checkSnapshotEdit(
  text: string,
  result: string,
  instances: readonly ConnectorInstanceModel[],
  instance: ConnectorInstanceModel,
  expectedKeys: readonly string[],
  set: { tool: string; pin: string } | undefined,
  removed: Span | undefined,
): void {
  const kept = commentsOf(text).filter((comment) => !removed || comment.offset < removed.offset || comment.offset >= removed.offset + removed.length);
  assert.deepEqual(
    commentsOf(result).map((comment) => comment.text),
    kept.map((comment) => comment.text),
    `every comment is kept\n--- before:\n${text}\n--- after:\n${result}`,
  );
  const problems = analyzeConnector(result).problems.filter((found) => found.code === 'TP100' || found.code === 'TP101');
  assert.deepEqual(problems.map((found) => `${found.code} ${found.message}`), [], `still valid JSONC\n--- before:\n${text}\n--- after:\n${result}`);
  const after = analyzeConnector(result).model.instances;
  assert.equal(after.length, instances.length);
  const changed = after[instances.indexOf(instance)]!;
  assert.deepEqual([...changed.snapshot.map((entry) => entry.tool.value)].sort(), [...expectedKeys].sort(), 'the snapshot has exactly the expected keys');
  if (set) assert.equal(changed.snapshot.find((entry) => entry.tool.value === set.tool)?.pin.value, set.pin);
  instances.forEach((other, index) => {
    if (other === instance) return;
    assert.deepEqual(
      after[index]!.snapshot.map((entry) => [entry.tool.value, entry.pin.value]),
      other.snapshot.map((entry) => [entry.tool.value, entry.pin.value]),
      'other instances are untouched',
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Cases found by the properties, each with its minimal input. They state what the property states,
// on one document a person could write.

const PIN_1 = `sha256:${'1'.repeat(64)}`;
const PIN_2 = `sha256:${'2'.repeat(64)}`;
const NEW_PIN = `sha256:${'0'.repeat(64)}`;

/** A one-instance connector whose `toolsSnapshot` member is written as given (JSONC text). */
function connectorWith(snapshot: string, transport = '{ "kind": "stdio", "command": "node" }'): string {
  return `{
  "name": "github_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": ${transport},
    "toolsSnapshot": ${snapshot}
  }
}
`;
}

function onlyInstance(text: string): ConnectorInstanceModel {
  const analysis = analyzeConnector(text);
  assert.deepEqual(analysis.problems, [], `the case itself is valid:\n${text}`);
  return analysis.model.instances[0]!;
}

describe('snapshot fixes: cases found by the properties', () => {
  test('removing the only entry of a snapshot written with a trailing comma leaves valid JSONC', () => {
    const text = connectorWith(`{ "create_issue": "${PIN_1}", }`);
    const instance = onlyInstance(text);
    const result = applyTextEdits(text, removeSnapshotEntryEdits(text, instance, 'create_issue'));
    // Found: the member is cut but its trailing comma stays, giving `"toolsSnapshot": { , }` (TP100).
    checkSnapshotEdit(text, result, [instance], instance, [], undefined, memberSpan(instance, 'create_issue'));
  });

  test('removing an entry keeps the end-of-line comment of the entry before it', () => {
    const text = connectorWith(`{
      "add_labels": "${PIN_1}", // pinned after the v2 release
      "create_issue": "${PIN_2}"
    }`);
    const instance = onlyInstance(text);
    const result = applyTextEdits(text, removeSnapshotEntryEdits(text, instance, 'create_issue'));
    // Found: everything from the end of "add_labels"'s value to the end of the removed member is
    // cut, so the comment about the entry that stays is deleted with it.
    checkSnapshotEdit(text, result, [instance], instance, ['add_labels'], undefined, memberSpan(instance, 'create_issue'));
  });

  test('removing the first entry keeps the comment above the entry after it', () => {
    const text = connectorWith(`{
      "add_labels": "${PIN_1}",
      // create_issue: re-pinned after the v2 release
      "create_issue": "${PIN_2}"
    }`);
    const instance = onlyInstance(text);
    const result = applyTextEdits(text, removeSnapshotEntryEdits(text, instance, 'add_labels'));
    // Found: removing the first member cuts up to the start of the next one, comment included.
    checkSnapshotEdit(text, result, [instance], instance, ['create_issue'], undefined, memberSpan(instance, 'add_labels'));
  });

  test('replacing an entry after a multi-line block comment with a quote writes the pin exactly', () => {
    const text = connectorWith(`{
      /* was "sha256:…
         before the v2 release" */ "create_issue": "${PIN_1}"
    }`);
    const instance = onlyInstance(text);
    const result = applyTextEdits(text, setSnapshotEntryEdits(text, instance, 'create_issue', NEW_PIN));
    // Found: the edit is formatted from the start of its line, which is inside the comment; the
    // formatter then reads the comment's quote as the start of a string, and the pin as tokens,
    // and writes "sha256: 000…" (a space after the colon: TP306, 65 hex digits).
    assert.ok(result.includes(`"create_issue": "${NEW_PIN}"`), `the pin is written as given:\n${result}`);
    checkSnapshotEdit(text, result, [instance], instance, ['create_issue'], { tool: 'create_issue', pin: NEW_PIN }, undefined);
    assert.deepEqual(codes(result, 'connector'), []);
  });

  test('adding an entry on a line that starts inside a block comment keeps the comment\'s text', () => {
    const text = `{
  "name": "github_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node" /* was:
"kind":"http",*/ }
  }
}
`;
    const instance = onlyInstance(text);
    const result = applyTextEdits(text, setSnapshotEntryEdits(text, instance, 'create_issue', NEW_PIN));
    // Found: the commented-out member is reformatted to `"kind": "http",` inside the comment.
    checkSnapshotEdit(text, result, [instance], instance, ['create_issue'], { tool: 'create_issue', pin: NEW_PIN }, undefined);
  });

  test('a re-pin next to the same comments changes only the pin (replacePinEdit never reformats)', () => {
    const text = connectorWith(`{
      /* was "sha256:…
         before the v2 release" */ "create_issue": "${PIN_1}", // pinned after the v2 release
      "add_labels": "${PIN_2}",
    }`);
    const instance = onlyInstance(text);
    const entry = instance.snapshot[0]!;
    const result = applyTextEdits(text, [replacePinEdit(entry.pin.span, NEW_PIN)]);
    assert.equal(result, text.replace(PIN_1, NEW_PIN));
  });
});
