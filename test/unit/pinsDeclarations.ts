/**
 * A compile-time test, run by `npm run typecheck`: the hand-written declarations of `toolpin/pins`
 * (types/pins.d.ts, shipped as dist/pins.d.ts) and the implementation (server/src/pins/index.ts)
 * are assignable to each other, export by export, so neither can promise what the other lacks.
 */
import type * as Declared from '../../types/pins';
import type * as Implemented from '../../server/src/pins/index';

type Exports<T> = { [K in keyof T]: T[K] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const declaredMatchesImplementation: Same<Exports<typeof Declared>, Exports<typeof Implemented>> = true;
export const sameToolShape: Same<Declared.ListedTool, Implemented.ListedTool> = true;
export const sameSchemaDrift: Same<Declared.SchemaDrift, Implemented.SchemaDrift> = true;
export const sameToolNotFound: Same<Declared.ToolNotFound, Implemented.ToolNotFound> = true;
export const sameSnapshotResult: Same<Declared.ToolsSnapshotResult, Implemented.ToolsSnapshotResult> = true;
export const sameExpectation: Same<Declared.SchemaPinExpectation, Implemented.SchemaPinExpectation> = true;
export const samePinnableTool: Same<Declared.PinnableTool, Implemented.PinnableTool> = true;
