/**
 * `toolpin hash` and live verification read tools with one reader: fed the same entries, hash
 * pins exactly the tools verification can pin, with the same hashes, and refuses the ones
 * verification calls unpinnable. The entries cover every tool shape the readers distinguish.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readListedTool } from '../../server/src/core/verify/listing';
import { schemaPin, toolPin } from '../../server/src/core/pins/pins';
import { readTools } from '../../server/src/core/verify/toolList';

const SHAPES: unknown[] = [
  { name: 'plain', description: 'A tool.', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
  { name: 'no_description', inputSchema: { type: 'object' } },
  { name: 'no_schema', description: 'Takes nothing.' },
  { name: 'older_shape', description: 'Old.', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
  { name: 'parameters_shape', description: 'Old.', parameters: { type: 'object' } },
  { name: 'with_extras', description: 'A tool.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true }, title: 'Extras' },
  { name: 'empty_schema', description: '', inputSchema: {} },
];

test('hash and verification agree on every tool shape', () => {
  const hashed = readTools({ tools: SHAPES });
  const verifiable = SHAPES.map((entry) => readListedTool(entry)).filter((tool) => typeof tool !== 'string' && tool.unpinnable === undefined);
  assert.deepEqual(
    hashed.tools.map((tool) => tool.name),
    verifiable.map((tool) => (typeof tool === 'string' ? tool : tool.name)),
  );
  for (const tool of hashed.tools) {
    const listed = verifiable.find((candidate) => typeof candidate !== 'string' && candidate.name === tool.name);
    assert.ok(listed && typeof listed !== 'string');
    assert.deepEqual(toolPin(tool), toolPin(listed));
    assert.deepEqual(schemaPin(tool.inputSchema ?? {}), schemaPin(listed.inputSchema ?? {}));
  }
  // What verification calls unpinnable, hash refuses with the same reason.
  for (const name of ['older_shape', 'parameters_shape']) {
    const problem = hashed.problems.find((candidate) => candidate.message.startsWith(`"${name}" cannot be pinned:`));
    assert.ok(problem, `${name}: ${JSON.stringify(hashed.problems)}`);
    assert.match(problem.message, /older shape/);
  }
});
