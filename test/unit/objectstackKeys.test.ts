/**
 * The connector keys Toolpin knows are ObjectStack's own (server/src/core/documents/objectstackKeys.ts),
 * read again here from the real schema files (test/fixtures/objectstack/spec, copied byte for byte
 * from objectstack-ai/objectstack at the version the table names): a new key in the schema, or a
 * table edited by hand, fails this test with the table to paste. Real typos stay unknown keys.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from '@babel/parser';

import { OBJECTSTACK_CONNECTOR_KEYS, OBJECTSTACK_RETIRED_CONNECTOR_KEYS, OBJECTSTACK_SPEC_VERSION } from '../../server/src/core/documents/objectstackKeys';
import { analyzeSource } from '../../server/src/core/documents/source/analyzeSource';
import { analyzeConnector } from '../../server/src/core/documents/connector';

const SPEC = path.resolve(__dirname, '../../../test/fixtures/objectstack/spec');

interface Member {
  readonly key: string;
  readonly retired: boolean;
}

/** The members of the first object literal in the initializer of `const name = …` in `file`: keys, retired keys and spreads (`...Name`). */
function objectMembers(file: string, name: string): Member[] {
  const program = parse(readFileSync(path.join(SPEC, file), 'utf8'), { sourceType: 'module', plugins: ['typescript'] }).program;
  const found: unknown[] = [];
  const visit = (value: unknown, inside: boolean): void => {
    if (typeof value !== 'object' || value === null || found.length > 0) return;
    if (Array.isArray(value)) return value.forEach((entry) => visit(entry, inside));
    const node = value as { type?: string; id?: { name?: string }; init?: unknown };
    if (inside && node.type === 'ObjectExpression') return void found.push(node);
    if (!inside && node.type === 'VariableDeclarator' && node.id?.name === name) return visit(node.init, true);
    for (const key of Object.keys(node)) if (key !== 'loc') visit(Reflect.get(node, key), inside);
  };
  visit(program, false);
  assert.equal(found.length, 1, `${file} defines ${name} as an object`);
  const object = found[0] as { properties: Array<{ type: string; key?: { name?: string }; value?: { type?: string; callee?: { name?: string } }; argument?: { name?: string } }> };
  return object.properties.map((member) =>
    member.type === 'SpreadElement'
      ? { key: `...${member.argument?.name}`, retired: false }
      : { key: member.key?.name ?? '', retired: member.value?.type === 'CallExpression' && member.value.callee?.name === 'retiredKey' },
  );
}

describe('ObjectStack connector keys', () => {
  test(`the table is ConnectorSchema of @objectstack/spec ${OBJECTSTACK_SPEC_VERSION} with MetadataProtectionFields spread in`, () => {
    const readme = readFileSync(path.resolve(__dirname, '../../../test/fixtures/objectstack/README.md'), 'utf8');
    assert.ok(readme.includes(`\`@objectstack/spec\` ${OBJECTSTACK_SPEC_VERSION}`), 'the fixtures are of the version the table names');
    const members = objectMembers('integration/connector.zod.ts', 'ConnectorSchema');
    const keys: string[] = [];
    for (const member of members) {
      if (member.key === '...MetadataProtectionFields') keys.push(...objectMembers('kernel-metadata-protection.zod.ts', 'MetadataProtectionFields').map((entry) => entry.key));
      else if (!member.retired) keys.push(member.key);
    }
    const retired = members.filter((member) => member.retired).map((member) => member.key);
    const table = `[\n${keys.map((key) => `  '${key}',`).join('\n')}\n]`;
    assert.deepEqual([...OBJECTSTACK_CONNECTOR_KEYS], keys, `regenerate objectstackKeys.ts: OBJECTSTACK_CONNECTOR_KEYS = ${table}`);
    assert.deepEqual([...OBJECTSTACK_RETIRED_CONNECTOR_KEYS], retired);
  });

  test('every key of the schema is known in a defineConnector call; a typo and a retired key are still TP102', () => {
    const members = OBJECTSTACK_CONNECTOR_KEYS.map((key) => `  ${key}: 0,`).join('\n');
    const text = `import { defineConnector } from '@objectstack/spec/integration';\nexport const c = defineConnector({\n${members}\n  enabeld: false,\n  rateLimitConfig: {},\n});\n`;
    const unknown = analyzeSource(text, 'c.ts').problems.filter((found) => found.code === 'TP102');
    assert.deepEqual(unknown.map((found) => text.slice(found.span.offset, found.span.offset + found.span.length)), ['enabeld', 'rateLimitConfig']);
  });

  test('the compiled stack knows the same keys and reports a typo', () => {
    const instance = Object.fromEntries(OBJECTSTACK_CONNECTOR_KEYS.map((key) => [key, key === 'name' ? 'erp' : key === 'provider' ? 'rest' : null]));
    const text = JSON.stringify({ name: 'app', connectors: [{ ...instance, requestTimeotMs: 1 }] });
    const unknown = analyzeConnector(text, { compiledStack: true }).problems.filter((found) => found.code === 'TP102');
    assert.deepEqual(unknown.map((found) => text.slice(found.span.offset, found.span.offset + found.span.length)), ['"requestTimeotMs"']);
  });
});
