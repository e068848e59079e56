/**
 * What changed between a pinned tool and the live one: a classification for hovers and drift
 * messages, and a readable line diff of the two canonical texts ("blind approve" is the failure
 * this exists to prevent: a reviewer must see what a re-pin accepts).
 *
 * Inputs come from the pin store (docs/formats.md §6): a schema pin's entry holds
 * canonicalJson(inputSchema), a tool pin's entry canonicalJson({name, description, inputSchema}).
 * {@link readStoreEntry} parses and checks one; {@link classifySchemaPinChange} and
 * {@link classifyToolPinChange} compare it with the live tool; {@link lineDiff} shows the lines.
 *
 * Impact of a schema change, from the caller's side. Each word is a claim that must be true:
 * - `breaking`: some call that was valid before is now rejected (required added, type narrowed,
 *   enum narrowed, tighter constraint, additional properties closed, a property removed where
 *   undeclared properties are not accepted);
 * - `may-break`: this module cannot decide, and a call that was valid may now be rejected (a
 *   keyword it does not analyse was added or changed, a narrowing inside one alternative of
 *   `anyOf`/`oneOf`, an optional property declared where undeclared properties were accepted: a
 *   call that passed that name with another shape is now rejected);
 * - `widening`: every call valid before is still valid (optional property added where undeclared
 *   properties were not accepted, required removed, enum widened, looser constraint, a schema
 *   wrapped into `anyOf` with new alternatives, …);
 * - `cosmetic`: validation is unchanged (descriptions, titles, examples, defaults, `$comment`, the
 *   declared `$schema` dialect, definitions nothing references, a `$ref` to an equal schema).
 * The schemas are compared normalised: local `$ref`s are inlined (a cyclic or non-local one is left
 * in place and its changes are `may-break`), and definitions are compared where they are used.
 * A tool's own description is never called cosmetic: it is what the model reads, the surface of a
 * rug pull, so a description-only rewrite is reported as its own kind and carries no impact.
 *
 * Annotations (`readOnlyHint`, `destructiveHint`, …) are not part of any pin, so the pinned side
 * never has them. The report carries the live tool's annotations as context; a "read-only →
 * destructive" change is only reported when the caller passes annotations from an earlier listing
 * (`previousAnnotations`), and the report says that they are not pinned content. Annotations are
 * hints from the server, not guarantees.
 *
 * Pure: no I/O. `diff` (jsdiff) is plain JavaScript and does the line diff.
 *
 * This file is the folder's face: the concerns live beside it (changeTypes.ts, storeEntry.ts,
 * classify.ts, schemaDiff.ts, normalise.ts, schemaWords.ts, lineDiff.ts).
 */
export type * from './changeTypes';
export { readStoreEntry, storeEntryName, type StoreEntry } from './storeEntry';
export { behaviourOf, classifySchemaPinChange, classifyToolPinChange, describeSchemaChanges, worstImpact } from './classify';
export { diffInputSchemas } from './schemaDiff';
export { escapePointer } from './schemaWords';
export { lineDiff, prettyCanonicalJson, type DiffHunk, type DiffLine, type LineDiff, type LineDiffOptions } from './lineDiff';
