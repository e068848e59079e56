/**
 * A pinned tool against the live one: the kind of change, the schema changes and their worst
 * impact, the live annotations as context, and the one-line summary hovers and drift messages show.
 */
import { isRecord } from '../json/values';
import type { AnnotationChange, ChangeImpact, ChangeKind, ChangeReport, ClassifyOptions, LiveToolLike, PinnedToolContent, SchemaChange, ToolAnnotations, ToolBehaviour } from './changeTypes';
import { diffInputSchemas } from './schemaDiff';

/**
 * Compares a schema pin's stored inputSchema with the live tool. The kind is `input-schema` or
 * `unchanged`: a schema pin does not cover the description, so a description rewrite is no
 * schema drift (docs/formats.md §2).
 */
export function classifySchemaPinChange(pinnedSchema: unknown, live: LiveToolLike, options: ClassifyOptions = {}): ChangeReport {
  const schemaChanges = diffInputSchemas(pinnedSchema, live.inputSchema);
  const kind: ChangeKind = schemaChanges.length > 0 ? 'input-schema' : 'unchanged';
  return finishReport('schema', kind, schemaChanges, {}, live, options);
}

/** Compares a tool pin's stored {name, description, inputSchema} with the live tool. */
export function classifyToolPinChange(pinned: PinnedToolContent, live: LiveToolLike, options: ClassifyOptions = {}): ChangeReport {
  const schemaChanges = diffInputSchemas(pinned.inputSchema, live.inputSchema);
  const descriptionChanged = pinned.description !== live.description;
  const nameChanged = pinned.name !== live.name;
  let kind: ChangeKind;
  if (nameChanged) kind = 'name';
  else if (descriptionChanged && schemaChanges.length > 0) kind = 'both';
  else if (descriptionChanged) kind = 'description-only';
  else if (schemaChanges.length > 0) kind = 'input-schema';
  else kind = 'unchanged';
  const extra: Partial<Pick<ChangeReport, 'description' | 'name'>> = {
    ...(descriptionChanged ? { description: { before: pinned.description, after: live.description } } : {}),
    ...(nameChanged ? { name: { before: pinned.name, after: live.name } } : {}),
  };
  return finishReport('tool', kind, schemaChanges, extra, live, options);
}

function finishReport(
  pin: 'schema' | 'tool',
  kind: ChangeKind,
  schemaChanges: SchemaChange[],
  extra: Partial<Pick<ChangeReport, 'description' | 'name'>>,
  live: LiveToolLike,
  options: ClassifyOptions,
): ChangeReport {
  const schemaImpact = worstImpact(schemaChanges);
  const liveAnnotations = readAnnotations(isRecord(live.raw) ? live.raw.annotations : undefined);
  const liveBehaviour = liveAnnotations ? behaviourOf(liveAnnotations) : undefined;
  let annotationChange: AnnotationChange | undefined;
  if (options.previousAnnotations && liveAnnotations) {
    const before = behaviourOf(options.previousAnnotations);
    const after = behaviourOf(liveAnnotations);
    if (before !== after) annotationChange = { before, after, detail: `${before} → ${after}`, source: 'earlier-listing' };
  }
  const report: ChangeReport = {
    pin,
    kind,
    schemaChanges,
    schemaImpact,
    ...extra,
    ...(liveAnnotations ? { liveAnnotations, liveBehaviour } : {}),
    ...(annotationChange ? { annotationChange } : {}),
    summary: '',
  };
  return { ...report, summary: summarize(report) };
}

const IMPACT_ORDER: readonly ChangeImpact[] = ['breaking', 'may-break', 'widening', 'cosmetic'];

/** The most severe impact of a list of changes (breaking > may-break > widening > cosmetic). */
export function worstImpact(changes: readonly SchemaChange[]): ChangeImpact | undefined {
  for (const impact of IMPACT_ORDER) if (changes.some((change) => change.impact === impact)) return impact;
  return undefined;
}

function summarize(report: ChangeReport): string {
  const parts: string[] = [];
  if (report.kind === 'name') {
    parts.push(`the pinned content is for tool "${report.name?.before}", not "${report.name?.after}"`);
  } else if (report.kind === 'unchanged') {
    parts.push('no change in the pinned content');
  } else if (report.kind === 'description-only') {
    parts.push('description only');
  } else {
    const label = report.kind === 'both' ? 'description and input schema' : 'input schema';
    parts.push(`${label}: ${describeSchemaChanges(report.schemaChanges)}`);
  }
  if (report.annotationChange) parts.push(`annotations ${report.annotationChange.detail} (since an earlier listing; annotations are not pinned)`);
  return parts.join('; ');
}

/** `required property "locale" added (breaking)`, plus `and N more (…)` when there are several. */
export function describeSchemaChanges(changes: readonly SchemaChange[]): string {
  if (changes.length === 0) return 'no change';
  const worst = worstImpact(changes)!;
  const first = changes.find((change) => change.impact === worst)!;
  const head = `${first.detail} (${first.impact})`;
  if (changes.length === 1) return head;
  const rest = changes.filter((change) => change !== first);
  const counts = IMPACT_ORDER.map((impact) => [impact, rest.filter((change) => change.impact === impact).length] as const)
    .filter(([, count]) => count > 0)
    .map(([impact, count]) => `${count} ${impact}`);
  return `${head} and ${rest.length} more change${rest.length === 1 ? '' : 's'} (${counts.join(', ')})`;
}

function readAnnotations(value: unknown): ToolAnnotations | undefined {
  if (!isRecord(value)) return undefined;
  const result: { -readonly [K in keyof ToolAnnotations]: ToolAnnotations[K] } = {};
  if (typeof value.title === 'string') result.title = value.title;
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    const hint = value[key];
    if (typeof hint === 'boolean') result[key] = hint;
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

/** MCP defaults: readOnlyHint false, destructiveHint true (meaningful only when not read-only). */
export function behaviourOf(annotations: ToolAnnotations): ToolBehaviour {
  if (annotations.readOnlyHint === true) return 'read-only';
  return annotations.destructiveHint === false ? 'additive' : 'destructive';
}
