/**
 * A blueprint step's `arguments` checked against the LIVE input schema of its tool, with Ajv, each
 * finding on the exact node it is about (TP410), and a schema Ajv cannot compile reported once as
 * information (TP411), never as a crash.
 *
 * Dialects: a schema declaring draft-07 is compiled with Ajv's default class, one declaring
 * 2020-12 with `ajv/dist/2020`. A schema without `$schema` is read as draft-07 (the two agree on
 * what tool schemas use, and draft-07 is the more lenient reading of tuple `items`); any other
 * `$schema` (draft-04, 2019-09, …) is read as draft-07 too, and every TP410 message says so.
 * Options: `strict: false` (real schemas carry unknown keywords), `allErrors: true`, formats are
 * not checked (Ajv ships none, and servers differ in which they enforce), no optimizing pass over
 * the generated code (see AJV_OPTIONS).
 * Compiled validators are cached by the live schema pin, so each live schema compiles once. A
 * schema of the common subset (typed properties, `required`, `additionalProperties`, `items`,
 * enums, constants and bounds) is not compiled at all for arguments it plainly accepts:
 * core/verify/simpleSchema.ts answers those with the same verdict, no finding, and Ajv reads only
 * the arguments it does not accept.
 *
 * Hostile schemas: `pattern` and `patternProperties` come from servers, so they run on a
 * linear-time engine (re2js, the JavaScript port of RE2), never on the backtracking `RegExp`:
 * `^(a+)+$` against a long near-match would otherwise block the event loop for minutes. A pattern
 * RE2 cannot read (lookaround, back-references) is not checked at all, which keeps the "no false
 * errors" guarantee. A schema whose validation never ends by recursion (`{"$ref": "#"}`) is
 * reported as TP411 on the arguments, never as a stack overflow.
 *
 * Values that are only known at run time — a string that is exactly one `{{…}}` template, and any
 * `{"$secret": …}` object — stand for ANY value; a string with a template inside
 * (`"Inbound: {{event.subject}}"`) stands for a string of unknown content. The design guarantees
 * no false errors: Ajv validates the plain value (placeholders included, as written), and an error
 * is reported only when its verdict cannot depend on what the placeholders become:
 *   1. errors at or below an any-value placeholder are dropped (its type and content are unknown);
 *   2. on a string with a template inside, errors about content (enum, const, pattern, format,
 *      minLength, maxLength, content*) are dropped; "must be a number" still holds;
 *   3. keywords whose verdict depends on the values below them (anyOf, oneOf, not, if/then/else,
 *      contains, uniqueItems, enum, const, unevaluated*) are dropped when a placeholder lies at or
 *      below their instance;
 *   4. errors inside a branch of such a keyword are dropped with it: Ajv keeps branch errors only
 *      when the combinator itself fails, and then reports the combinator's own error at an
 *      ancestor-or-self instance; when that instance holds a placeholder, every error at or below
 *      it is dropped (this needs no schema-path analysis, so `$ref`s cannot fool it).
 * Keywords that depend only on keys, counts and the types of non-placeholder values (required,
 * additionalProperties, type, minItems, …) keep their errors: a placeholder is present whatever it
 * becomes, so `required` is satisfied by it. Without placeholders every Ajv error is kept (the
 * property test holds "valid here" = "valid for Ajv").
 * For readability only, the branch errors of a failing anyOf / oneOf / contains are folded into
 * that keyword's one finding ("expects a string or null"), and an `if` error is dropped when the
 * then/else errors it summarises are reported.
 *
 * Pure: Ajv generates code in memory and does no I/O.
 */
import type { default as Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import type { default as Ajv2020 } from 'ajv/dist/2020';
import { ajvDraft07, ajvDraft2020, re2js } from '../deferredLibraries';
import { acceptedWithoutAjv, isSimpleSchema } from './simpleSchema';
import type { StepModel } from '../documents/blueprint';
import { describeNodeType, type JsonNode, objectProperties, propertyKeySpan, propertyKeyText, propertyValueNode, spanOf } from '../json/jsonDocument';
import { errorMessage, isArray, isRecord } from '../json/values';
import { schemaPin } from '../pins/pins';
import { type Problem, problem, type Span } from '../problems';
import { isSecretReference } from '../secrets';

// ---------------------------------------------------------------------------------------------
// Dialects and compiled validators

export type SchemaDialect = 'draft-07' | '2020-12';

export interface DialectChoice {
  readonly dialect: SchemaDialect;
  /** The `$schema` the schema declares, if any. */
  readonly declared: string | undefined;
  /** True when `$schema` names a dialect Toolpin does not know, so draft-07 was assumed. */
  readonly assumed: boolean;
}

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/** Which Ajv class reads a schema, from its `$schema`. */
export function chooseDialect(schema: unknown): DialectChoice {
  const declared = isRecord(schema) && typeof schema.$schema === 'string' ? schema.$schema : undefined;
  if (declared === undefined) return { dialect: 'draft-07', declared, assumed: false };
  if (DRAFT_2020_12.test(declared)) return { dialect: '2020-12', declared, assumed: false };
  return { dialect: 'draft-07', declared, assumed: !DRAFT_07.test(declared) };
}

export type CompiledSchema =
  | { readonly ok: true; readonly validate: ValidateFunction; readonly dialect: DialectChoice }
  | { readonly ok: false; readonly reason: string; readonly dialect: DialectChoice };

/**
 * Ajv's regular-expression engine: RE2 semantics in linear time. Ajv passes the `u` flag only; a
 * pattern RE2 does not support matches everything (it is not checked rather than wrongly checked).
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): { test: (text: string) => boolean } => {
    try {
      const compiled = re2js().RE2JS.compile(pattern);
      return { test: (text: string) => compiled.test(text) };
    } catch {
      return { test: () => true };
    }
  },
  { code: 'linearRegExp' },
);

/**
 * `code.optimize: false`: Ajv's optimizing pass over the generated code (merging and removing
 * redundant checks) does not change what a validator accepts, and each validator here runs a few
 * times (once per step that calls its tool), so the pass cost more than it saved. Compiling the
 * 150 live schemas of the verification benchmark took 86–137 ms without it, 179–241 ms with it
 * (issue 13: the cold `toolpin check` compiles every needed schema).
 * Exported for test/unit/simpleSchema.property.test.ts, whose oracle compiles with these same options.
 */
export const AJV_OPTIONS = { strict: false, allErrors: true, validateFormats: false, verbose: true, logger: false, code: { regExp: linearRegExp, optimize: false } } as const;

/**
 * Compiled validators by live schema pin, least recently used dropped beyond `capacity`. One Ajv
 * instance per dialect is shared; each compiled schema is removed from it again right after
 * compiling (the validator keeps working), so two live schemas with the same `$id` never clash.
 */
export class ArgumentValidators {
  private readonly cache = new Map<string, CompiledSchema>();
  private draft07: Ajv | undefined;
  private draft2020: Ajv2020 | undefined;
  /** How many schemas were compiled (not served from the cache); for tests. */
  compileCount = 0;
  /** The key and validator of the last answer (always also in the cache, as its newest entry). */
  private lastKey: string | undefined;
  private last: CompiledSchema | undefined;
  /**
   * The `arguments` nodes that a validator accepted, by node. A node is never changed except by
   * moving (core/documents/incremental.ts shifts offsets in place); a step that is read again gets
   * new nodes. So the same node checked with the same validator is accepted again, and a large
   * blueprint's unchanged steps are not read into values and validated again on every keystroke.
   * Only acceptance is remembered: findings hold spans, which are made anew each time.
   */
  readonly accepted = new WeakMap<JsonNode, CompiledSchema>();

  constructor(private readonly capacity = 256) {}

  get size(): number {
    return this.cache.size;
  }

  clear(): void {
    this.cache.clear();
    this.lastKey = undefined;
    this.last = undefined;
  }

  /**
   * Compiles the validator of a live schema ahead of its first use, when it is not cached yet,
   * the cache has room (so that warming never evicts a validator a check is about to ask for), and
   * the schema is not of the common subset (simpleSchema.ts), whose validator is compiled only when
   * some step's arguments need Ajv. `pin` is the schema pin, the key {@link get} is asked with.
   * Returns whether it compiled.
   */
  warm(schema: unknown, pin: string): boolean {
    // A schema of the common subset is compiled only if some step's arguments need Ajv (checkArguments).
    if (this.cache.has(pin) || this.cache.size >= this.capacity || isSimpleSchema(schema)) return false;
    this.get(schema, pin);
    return true;
  }

  /** The validator for a live schema; `pin` is its schema pin when the caller already has it. */
  get(schema: unknown, pin?: string): CompiledSchema {
    // A blueprint's steps call a few tools many times over: the schema asked for last is the
    // likely next one, and answering it touches nothing (a re-insert per step was most of what
    // verifying a large file allocated).
    if (pin !== undefined && pin === this.lastKey && this.last) return this.last;
    let key = pin;
    if (key === undefined) {
      try {
        key = schemaPin(schema);
      } catch (error) {
        return { ok: false, reason: `it is not plain JSON (${errorMessage(error)})`, dialect: chooseDialect(schema) };
      }
    }
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      this.lastKey = key;
      this.last = cached;
      return cached;
    }
    const compiled = this.compile(schema, chooseDialect(schema));
    this.lastKey = key;
    this.last = compiled;
    this.cache.set(key, compiled);
    // The map keeps insertion order, and a hit is re-inserted above: the first keys are the least recently used.
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= this.capacity) break;
      this.cache.delete(oldest);
    }
    return compiled;
  }

  private compile(schema: unknown, dialect: DialectChoice): CompiledSchema {
    this.compileCount++;
    if (!isRecord(schema) && typeof schema !== 'boolean') {
      return { ok: false, reason: 'it is not an object', dialect };
    }
    // The dialect is chosen above; the root's $schema is dropped so that an unknown or
    // differently spelled one cannot make Ajv look for a meta-schema it does not have.
    const copy: Record<string, unknown> | boolean = isRecord(schema) ? { ...schema } : schema;
    if (isRecord(copy)) delete copy.$schema;
    const ajv = dialect.dialect === '2020-12' ? (this.draft2020 ??= new (ajvDraft2020().default)(AJV_OPTIONS)) : (this.draft07 ??= new (ajvDraft07().default)(AJV_OPTIONS));
    try {
      const validate = ajv.compile(copy);
      return { ok: true, validate, dialect };
    } catch (error) {
      return { ok: false, reason: errorMessage(error), dialect };
    } finally {
      try {
        ajv.removeSchema(copy);
      } catch {
        // Nothing was registered.
      }
    }
  }
}

/** The validators used when the caller does not pass its own. */
export const sharedArgumentValidators = new ArgumentValidators();

// ---------------------------------------------------------------------------------------------
// Placeholders

/** A value only known at run time. `any`: a whole template or a $secret; `string`: a string with a template inside. */
export interface Placeholder {
  readonly path: readonly string[];
  readonly kind: 'any' | 'string';
}

const WHOLE_TEMPLATE = /^\{\{(?:(?!\{\{|\}\})[\s\S])*\}\}$/;
const SOME_TEMPLATE = /\{\{[\s\S]*?\}\}/;

/** True for a string that is exactly one `{{…}}` template, e.g. `{{event.subject}}`. */
export function isWholeTemplate(text: string): boolean {
  return WHOLE_TEMPLATE.test(text);
}

/** The plain value of an arguments node, and where its placeholders are. */
export function readArguments(node: JsonNode): { value: unknown; placeholders: Placeholder[] } {
  const placeholders: Placeholder[] = [];
  const value = read(node, [], placeholders);
  return { value, placeholders };
}

/**
 * The plain value of `node`. `path` is where the node is, as a stack the walk pushes to and pops
 * from: a placeholder takes a copy of it, and nothing else is made per member (a path array per
 * member and a property descriptor per member were most of what verifying a large file allocated,
 * issue 13).
 */
function read(node: JsonNode, path: string[], placeholders: Placeholder[]): unknown {
  switch (node.type) {
    case 'object': {
      if (isSecretReference(node)) placeholders.push({ path: [...path], kind: 'any' });
      const result: Record<string, unknown> = {};
      for (const member of node.children ?? []) {
        const key = propertyKeyText(member);
        if (key === undefined) continue;
        const valueNode = propertyValueNode(member);
        path.push(key);
        // A repeated key replaces the earlier value (below), and with it the placeholders found in
        // it: a template in the first "a" says nothing of the 5 in the second.
        if (Object.hasOwn(result, key)) dropPlaceholdersUnder(placeholders, path);
        // A key without a value node is a value computed at run time (source files) or a syntax
        // error: it is present, and whatever it becomes holds no verdict.
        if (!valueNode) placeholders.push({ path: [...path], kind: 'any' });
        const value = valueNode ? read(valueNode, path, placeholders) : null;
        path.pop();
        // Last duplicate wins, as in JSON.parse. "__proto__" is data, not the prototype: it is the
        // one name a plain object's assignment does not store as its own property.
        if (key === '__proto__') Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
        else result[key] = value;
      }
      return result;
    }
    case 'array': {
      const items = node.children ?? [];
      const result: unknown[] = new Array<unknown>(items.length);
      items.forEach((item, index) => {
        path.push(String(index));
        result[index] = read(item, path, placeholders);
        path.pop();
      });
      return result;
    }
    case 'string': {
      const text = String(node.value);
      if (isWholeTemplate(text)) placeholders.push({ path: [...path], kind: 'any' });
      else if (SOME_TEMPLATE.test(text)) placeholders.push({ path: [...path], kind: 'string' });
      return text;
    }
    default:
      return node.value;
  }
}

/** Removes, in place, the placeholders at or below `path`. */
function dropPlaceholdersUnder(placeholders: Placeholder[], path: readonly string[]): void {
  let kept = 0;
  for (const placeholder of placeholders) if (!startsWith(placeholder.path, path)) placeholders[kept++] = placeholder;
  placeholders.length = kept;
}

// ---------------------------------------------------------------------------------------------
// The check

export interface ArgumentCheck {
  /** How messages name the step, e.g. `step "open-issue"`. */
  readonly step: string;
  readonly tool: string;
  /** The `arguments` node; undefined when the step has none (validated as `{}`). */
  readonly argumentsNode: JsonNode | undefined;
  /** Where to report when there is no `arguments` node (e.g. the toolName string). */
  readonly anchor: Span;
  /** The live tool's inputSchema. Undefined (a tool served without one) checks nothing. */
  readonly liveSchema: unknown;
  /** The live schema pin, when the caller has it: the cache key. */
  readonly liveSchemaPin?: string;
}

/** TP410 for each argument the live input schema rejects; one TP411 when it does not compile. Never throws. */
export function checkArguments(check: ArgumentCheck, validators: ArgumentValidators = sharedArgumentValidators): Problem[] {
  if (check.liveSchema === undefined) return [];
  const node = check.argumentsNode;
  if (node && node.type !== 'object') return []; // a shape problem (TP103) says so already
  // Arguments that a schema of the common subset plainly accepts need no validator (simpleSchema.ts).
  let alreadyRead: { value: unknown; placeholders: Placeholder[] } | undefined;
  if (isSimpleSchema(check.liveSchema)) {
    alreadyRead = node ? readArguments(node) : { value: {}, placeholders: [] };
    if (acceptedWithoutAjv(check.liveSchema, alreadyRead.value, alreadyRead.placeholders)) return [];
  }
  const compiled = validators.get(check.liveSchema, check.liveSchemaPin);
  if (!compiled.ok) {
    const span = node ? keySpanOf(node) ?? openingBrace(node) : check.anchor;
    return [
      problem('TP411', span, `${check.step}: the arguments cannot be checked, because the live input schema of tool "${check.tool}" does not compile (${compiled.reason})`, {
        data: { tool: check.tool, reason: compiled.reason },
      }),
    ];
  }
  if (node && validators.accepted.get(node) === compiled) return [];
  const { value, placeholders } = alreadyRead ?? (node ? readArguments(node) : { value: {}, placeholders: [] });
  let valid: boolean;
  try {
    valid = compiled.validate(value) === true;
  } catch (error) {
    // A schema that refers to itself without consuming the instance ({"$ref": "#"}) recurses
    // until the stack is exhausted: a schema that cannot be checked, not a crash.
    const reason = error instanceof RangeError ? 'it refers to itself without end ($ref recursion)' : errorMessage(error);
    const span = node ? keySpanOf(node) ?? openingBrace(node) : check.anchor;
    return [
      problem('TP411', span, `${check.step}: the arguments cannot be checked, because the live input schema of tool "${check.tool}" cannot be evaluated (${reason})`, {
        data: { tool: check.tool, reason },
      }),
    ];
  }
  if (valid) {
    if (node) validators.accepted.set(node, compiled);
    return [];
  }
  const errors = reportableErrors(compiled.validate.errors ?? [], placeholders);
  const note = compiled.dialect.assumed
    ? ` (its $schema "${compiled.dialect.declared}" is not one Toolpin knows, so it was read as draft-07)`
    : '';
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const found = describeError(error, check, note);
    const key = `${found.span.offset}:${found.span.length}:${found.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(
      problem('TP410', found.span, found.message, {
        data: { tool: check.tool, argument: error.instancePath, keyword: error.keyword, schemaPath: error.schemaPath },
      }),
    );
  }
  return problems;
}

/** {@link checkArguments} for a blueprint step, against the live input schema of its tool. */
export function checkStepArguments(step: StepModel, liveSchema: unknown, liveSchemaPin?: string, validators?: ArgumentValidators): Problem[] {
  if (!step.mcp?.toolName) return [];
  const label = step.id ? `step "${step.id.value}"` : `step #${step.index + 1}`;
  return checkArguments(
    {
      step: label,
      tool: step.mcp.toolName.value,
      argumentsNode: step.mcp.argumentsNode,
      anchor: step.mcp.toolName.span,
      liveSchema,
      ...(liveSchemaPin !== undefined ? { liveSchemaPin } : {}),
    },
    validators,
  );
}

// ---------------------------------------------------------------------------------------------
// Which Ajv errors hold whatever the placeholders become

/** Verdicts that depend on the values at or below their instance. */
const VALUE_DEPENDENT = new Set(['anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'contains', 'uniqueItems', 'enum', 'const', 'unevaluatedProperties', 'unevaluatedItems']);
/** Verdicts about a string's content. */
const CONTENT_DEPENDENT = new Set(['enum', 'const', 'pattern', 'format', 'minLength', 'maxLength', 'contentEncoding', 'contentMediaType', 'contentSchema']);
/** Keywords that report their own error when their branches fail. */
const COMBINATORS = new Set(['anyOf', 'oneOf', 'not', 'if', 'contains']);
/** Combinators whose branch errors are folded into their own finding. */
const FOLDING = new Set(['anyOf', 'oneOf', 'contains']);

function reportableErrors(errors: readonly ErrorObject[], placeholders: readonly Placeholder[]): ErrorObject[] {
  const tainted = (path: readonly string[]): boolean => placeholders.some((placeholder) => startsWith(placeholder.path, path));
  const candidates = errors.map((error) => ({ error, path: pointerSegments(error.instancePath), kept: true }));
  const combinatorsAt = candidates.filter(({ error, path }) => COMBINATORS.has(error.keyword) && tainted(path));

  for (const candidate of candidates) {
    const { error, path } = candidate;
    if (placeholders.some((placeholder) => placeholder.kind === 'any' && startsWith(path, placeholder.path))) candidate.kept = false;
    else if (CONTENT_DEPENDENT.has(error.keyword) && placeholders.some((placeholder) => placeholder.kind === 'string' && sameSegments(path, placeholder.path))) candidate.kept = false;
    else if (VALUE_DEPENDENT.has(error.keyword) && tainted(path)) candidate.kept = false;
    else if (combinatorsAt.some((combinator) => startsWith(path, combinator.path))) candidate.kept = false;
  }

  // Readability: fold branch errors into a failing anyOf / oneOf / contains. Branch errors are
  // emitted before their combinator; walking backwards, only a kept combinator folds, and only
  // errors before it, so the last kept error always survives.
  for (let index = candidates.length - 1; index >= 0; index--) {
    const combinator = candidates[index];
    if (!combinator?.kept || !FOLDING.has(combinator.error.keyword)) continue;
    const own = combinator.error.schemaPath;
    const parent = own.slice(0, own.lastIndexOf('/'));
    for (const earlier of candidates.slice(0, index)) {
      if (!earlier.kept || !startsWith(earlier.path, combinator.path)) continue;
      const schemaPath = earlier.error.schemaPath;
      const sibling = schemaPath.startsWith(`${parent}/`) && !schemaPath.startsWith(`${own}/`);
      if (!sibling) earlier.kept = false;
    }
  }
  // An `if` error only says "must match the then schema"; drop it when an earlier error at or
  // below it (the then/else error it summarises) is reported.
  candidates.forEach((candidate, index) => {
    if (!candidate.kept || candidate.error.keyword !== 'if') return;
    const covered = candidates.slice(0, index).some((other) => other.kept && other.error.keyword !== 'if' && startsWith(other.path, candidate.path));
    if (covered) candidate.kept = false;
  });
  return candidates.filter((candidate) => candidate.kept).map((candidate) => candidate.error);
}

// ---------------------------------------------------------------------------------------------
// Messages and spans

interface Described {
  readonly span: Span;
  readonly message: string;
}

function describeError(error: ErrorObject, check: ArgumentCheck, note: string): Described {
  const segments = pointerSegments(error.instancePath);
  const located = check.argumentsNode ? locate(check.argumentsNode, segments) : undefined;
  const schemaText = `the live input schema of tool "${check.tool}"`;
  const params: Record<string, unknown> = error.params;
  const at = (argument: string, what: string, expects: string): Described => ({
    span: located ? spanOf(located.node) : check.anchor,
    message: `${check.step}: ${argument} ${what}; ${schemaText} ${expects}${note}`,
  });
  const subject = describeArgument(segments);

  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
    case 'dependencies': {
      const missing = String(params.missingProperty ?? '');
      const argument = describeArgument([...segments, missing]);
      const span = located ? keySpanOf(located.node) ?? openingBrace(located.node) : check.anchor;
      const because = error.keyword === 'required' ? 'requires it' : `requires it when "${String(params.property ?? '')}" is set`;
      const absent = check.argumentsNode ? '' : ' (the step has no "arguments")';
      return { span, message: `${check.step}: ${argument} is missing${absent}; ${schemaText} ${because}${note}` };
    }
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(params.additionalProperty ?? params.unevaluatedProperty ?? '');
      const argument = describeArgument([...segments, name]);
      const member = located ? objectProperties(located.node).filter((property) => property.key === name).pop() : undefined;
      const declared = isRecord(error.parentSchema) && isRecord(error.parentSchema.properties) ? Object.keys(error.parentSchema.properties) : [];
      const expects = declared.length > 0 ? `accepts only ${declared.map((key) => JSON.stringify(key)).join(', ')}` : 'accepts no properties here';
      return {
        span: member ? spanOf(member.keyNode) : located ? spanOf(located.node) : check.anchor,
        message: `${check.step}: ${argument} is not declared; ${schemaText} ${expects}${note}`,
      };
    }
    case 'propertyNames': {
      const name = String(params.propertyName ?? '');
      const member = located ? objectProperties(located.node).filter((property) => property.key === name).pop() : undefined;
      return {
        span: member ? spanOf(member.keyNode) : located ? spanOf(located.node) : check.anchor,
        message: `${check.step}: the property name ${JSON.stringify(name)} in ${subject} is not allowed; ${schemaText} restricts the property names${note}`,
      };
    }
    case 'items':
    case 'additionalItems': {
      // "must NOT have more than N items": point at the first item past the limit.
      const limit = typeof params.limit === 'number' ? params.limit : undefined;
      const extra = limit !== undefined && located?.node.type === 'array' ? located.node.children?.[limit] : undefined;
      if (extra) {
        return {
          span: spanOf(extra),
          message: `${check.step}: ${describeArgument([...segments, String(limit)])} and any later items are not accepted; ${schemaText} accepts at most ${limit} item${limit === 1 ? '' : 's'} here${note}`,
        };
      }
      return at(subject, 'does not match', `says it ${error.message ?? 'has items it does not accept'}`);
    }
    case 'type':
      return at(subject, `is ${describeFound(located?.node)}`, `expects ${describeTypes(params.type)}`);
    case 'enum':
      return at(subject, 'is not an allowed value', `expects one of ${listValues(Array.isArray(params.allowedValues) ? params.allowedValues : [])}`);
    case 'const':
      return at(subject, 'is not the allowed value', `expects ${shortJson(params.allowedValue)}`);
    case 'anyOf':
    case 'oneOf': {
      const passing = params.passingSchemas;
      if (Array.isArray(passing)) {
        return at(subject, `matches more than one alternative (${passing.map((index) => `#${Number(index) + 1}`).join(', ')})`, 'expects it to match exactly one');
      }
      const listed = isRecord(error.parentSchema) ? error.parentSchema[error.keyword] : undefined;
      const branches = isArray(listed) ? listed : [];
      return at(subject, 'matches none of the alternatives', `expects ${branches.map(describeBranch).join(' or ') || 'one of its alternatives'}`);
    }
    default:
      return at(subject, 'does not match', `says it ${error.message ?? `fails "${error.keyword}"`}`);
  }
}

interface Located {
  readonly node: JsonNode;
}

/** The node at an instance path; stops at the deepest node that exists. */
function locate(root: JsonNode, segments: readonly string[]): Located {
  let node = root;
  for (const segment of segments) {
    let next: JsonNode | undefined;
    if (node.type === 'object') {
      next = objectProperties(node).filter((property) => property.key === segment).pop()?.valueNode;
    } else if (node.type === 'array' && /^\d+$/.test(segment)) {
      next = node.children?.[Number(segment)];
    }
    if (!next) break;
    node = next;
  }
  return { node };
}

/** The span of the key whose value this node is (`"arguments"`, `"options"`), if it is a member's value. */
function keySpanOf(node: JsonNode): Span | undefined {
  const parent = node.parent;
  if (parent?.type === 'property' && propertyValueNode(parent) === node) return propertyKeySpan(parent);
  return undefined;
}

function openingBrace(node: JsonNode): Span {
  return { offset: node.offset, length: 1 };
}

/** `argument "options.locale"`, `argument "edits[0].oldText"`, or `the arguments` for the root. */
function describeArgument(segments: readonly string[]): string {
  if (segments.length === 0) return 'the arguments';
  let text = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment) && text !== '') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return `argument "${text}"`;
}

/** What a value is, for a type mismatch: numbers say whether they are integers (JSON Schema's `integer`). */
function describeFound(node: JsonNode | undefined): string {
  if (!node) return 'a value of another type';
  if (node.type === 'number') return Number.isInteger(node.value) ? 'an integer' : 'a number with a fraction';
  const noun = describeNodeType(node);
  return noun === 'a value' ? 'a value of another type' : noun;
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function describeTypes(type: unknown): string {
  const types = Array.isArray(type) ? type : typeof type === 'string' ? type.split(',') : [];
  // Own names only: the type comes from a live schema, and "constructor" is not a JSON type.
  return types.map((entry) => (Object.hasOwn(TYPE_NOUNS, String(entry)) ? TYPE_NOUNS[String(entry)] : String(entry))).join(' or ') || 'another type';
}

function describeBranch(branch: unknown): string {
  if (branch === true) return 'any value';
  if (!isRecord(branch)) return 'nothing';
  if (Object.prototype.hasOwnProperty.call(branch, 'const')) return shortJson(branch.const);
  if (Array.isArray(branch.enum)) return `one of ${listValues(branch.enum)}`;
  if (branch.type !== undefined) return describeTypes(branch.type);
  if (typeof branch.$ref === 'string') return `a value matching ${JSON.stringify(branch.$ref)}`;
  return 'a value matching its alternative';
}

function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, 8).map(shortJson);
  return values.length > 8 ? `${shown.join(', ')} and ${values.length - 8} more` : shown.join(', ');
}

function shortJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** RFC 6901 segments of an instance path (`/a~1b/0` → `a/b`, `0`). */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

function sameSegments(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && startsWith(a, b);
}
