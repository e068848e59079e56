/**
 * The vocabulary of a change report (see changes.ts for what each impact word claims): the impact
 * of a schema change, one schema change, what kind of change a pin's content went through, tool
 * annotations and the report itself. Types only.
 */

/**
 * From the caller's side: `breaking` (some call that was valid is now rejected), `may-break` (this
 * module cannot decide; a call that was valid may be rejected), `widening` (every call that was
 * valid still is), `cosmetic` (exactly the same calls are valid).
 */
export type ChangeImpact = 'breaking' | 'may-break' | 'widening' | 'cosmetic';

export type SchemaChangeKind =
  | 'required-added'
  | 'required-removed'
  | 'property-added'
  | 'property-removed'
  | 'type-changed'
  | 'enum-narrowed'
  | 'enum-widened'
  | 'enum-changed'
  | 'additional-properties-tightened'
  | 'additional-properties-loosened'
  | 'description-changed'
  | 'annotation-changed'
  | 'constraint-changed'
  | 'dialect-changed'
  | 'alternatives-added'
  | 'alternatives-removed'
  | 'definition-changed'
  | 'other-changed';

/** One concrete difference between two input schemas. */
export interface SchemaChange {
  readonly kind: SchemaChangeKind;
  readonly impact: ChangeImpact;
  /**
   * JSON Pointer into the schema where the change is: into the live schema for additions and
   * changes, into the pinned schema for removals. E.g. `/properties/locale`,
   * `/properties/edits/items/properties/oldText/type`, `/additionalProperties`.
   */
  readonly path: string;
  /** The argument it concerns, for people: `locale`, `options.unit`, `edits[].oldText`; `` for the arguments object. */
  readonly argument: string;
  /** One line for people, e.g. `required property "locale" added`. */
  readonly detail: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** What kind of change a pin's content went through. `name`: the stored content is for another tool name. */
export type ChangeKind = 'unchanged' | 'description-only' | 'input-schema' | 'both' | 'name';

export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** What the annotations say a call does, with the MCP defaults (readOnly false, destructive true). */
export type ToolBehaviour = 'read-only' | 'additive' | 'destructive';

export interface AnnotationChange {
  readonly before: ToolBehaviour;
  readonly after: ToolBehaviour;
  /** E.g. `read-only → destructive`. */
  readonly detail: string;
  /** Annotations are not pinned content: this compares with an earlier listing the caller had. */
  readonly source: 'earlier-listing';
}

export interface ChangeReport {
  readonly pin: 'schema' | 'tool';
  readonly kind: ChangeKind;
  /** Every schema difference, in schema order. Empty when the input schemas are equal. */
  readonly schemaChanges: readonly SchemaChange[];
  /** The most severe impact among {@link schemaChanges}; undefined when there are none. */
  readonly schemaImpact: ChangeImpact | undefined;
  /** Set for tool pins when the tool description differs. */
  readonly description?: { readonly before: string | undefined; readonly after: string | undefined };
  /** Set for tool pins when the name differs (the store entry was written for another tool). */
  readonly name?: { readonly before: string; readonly after: string };
  /** The live tool's annotations, as context; never part of a pin. */
  readonly liveAnnotations?: ToolAnnotations;
  readonly liveBehaviour?: ToolBehaviour;
  /** Only when `previousAnnotations` were given and say something different. */
  readonly annotationChange?: AnnotationChange;
  /** One line, e.g. `input schema: required property "locale" added (breaking)` or `description only`. */
  readonly summary: string;
}

/** The content of a tool pin's store entry. */
export interface PinnedToolContent {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

/** The live side: a `ListedTool` fits, and so does any `{ name, description?, inputSchema?, raw? }`. */
export interface LiveToolLike {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** The tool object as served; annotations are read from here. */
  readonly raw?: unknown;
}

export interface ClassifyOptions {
  /** Annotations from an earlier listing of the same tool (not pinned content), to report read-only → destructive. */
  readonly previousAnnotations?: ToolAnnotations;
}
