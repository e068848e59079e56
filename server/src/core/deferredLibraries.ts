/**
 * Libraries the core needs for some documents only, loaded the first time one needs them.
 *
 * Babel's parser reads TypeScript and JavaScript sources, Ajv checks step arguments against live
 * schemas, and re2js runs the `pattern`s of those schemas. A workspace of blueprints only, a
 * language server with verification off, or `toolpin hash` needs none of them, and loading them
 * at start-up cost a language server about 10 MiB before it read a file (issue 13). Everything
 * else imports them as types only and asks here at the point of use.
 *
 * Contract: each function returns the library's module, the same object on every call; the first
 * call loads and evaluates it. In the transpiled modules (out/) that is Node's `require` from
 * node_modules. In the shipped bundle the library is a file of its own beside dist/commands.js
 * (dist/lib/babel-parser.js, ajv.js with both dialects, re2js.js: esbuild.mjs, DEFERRED_LIBRARIES),
 * which the build's plugin makes this `require` read on the first call, so that a run which never
 * calls it neither reads nor compiles the library's code. The core's rule against `require` (no
 * I/O) has one exception, this file: a deferred `require` of a library is an `import` that runs
 * later, not I/O the core performs.
 */
import type * as BabelParser from '@babel/parser';
import type * as AjvDraft07 from 'ajv';
import type * as AjvDraft2020 from 'ajv/dist/2020';
import type * as Re2js from 're2js';

let babelModule: typeof BabelParser | undefined;
let ajvModule: typeof AjvDraft07 | undefined;
let ajv2020Module: typeof AjvDraft2020 | undefined;
let re2jsModule: typeof Re2js | undefined;

/** `@babel/parser`. */
export function babelParser(): typeof BabelParser {
  return (babelModule ??= require('@babel/parser'));
}

/** `ajv` (draft-07): its `default` export is the Ajv class. */
export function ajvDraft07(): typeof AjvDraft07 {
  return (ajvModule ??= require('ajv'));
}

/** `ajv/dist/2020` (draft 2020-12): its `default` export is the Ajv2020 class. */
export function ajvDraft2020(): typeof AjvDraft2020 {
  return (ajv2020Module ??= require('ajv/dist/2020'));
}

/** `re2js`, the linear-time regular-expression engine. */
export function re2js(): typeof Re2js {
  return (re2jsModule ??= require('re2js'));
}
