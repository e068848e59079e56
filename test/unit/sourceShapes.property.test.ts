/**
 * Property: for TypeScript modules mixing the shapes real code uses (import forms of the package
 * root, the subpath, aliases and namespaces; pins and servers as literals, constants and members
 * of `as const` objects; inline `defineStack` connectors; decorated classes; minified-style
 * functions whose parameter shadows the alias), what the source reader reads is exactly what the
 * generator wrote: every connector pin and every step pin with its server, each at the position
 * of the literal that holds it, and nothing else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';

import { analyzeSource } from '../../server/src/core/documents/source/analyzeSource';

type Holder = 'literal' | 'constant' | 'member';

interface ConnectorSpec {
  readonly name: string;
  readonly pins: ReadonlyArray<{ readonly tool: string; readonly pin: string; readonly holder: Holder }>;
  readonly inline: boolean;
}

interface StepSpec {
  readonly id: string;
  readonly server: string;
  readonly serverHolder: Holder;
  readonly hash: string;
  readonly hashHolder: Holder;
}

interface ModuleSpec {
  readonly connectorImport: 'root' | 'subpath' | 'alias' | 'namespace';
  readonly connectors: readonly ConnectorSpec[];
  readonly steps: readonly StepSpec[];
  readonly noise: ReadonlyArray<'decorated' | 'shadowed' | 'comment'>;
}

const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));
const identifier = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/);
const holder = fc.constantFrom<Holder>('literal', 'constant', 'member');

const moduleSpec: fc.Arbitrary<ModuleSpec> = fc.record({
  connectorImport: fc.constantFrom('root', 'subpath', 'alias', 'namespace'),
  connectors: fc.uniqueArray(
    fc.record({
      name: identifier,
      pins: fc.uniqueArray(fc.record({ tool: identifier, pin: hex(64).map((value) => `sha256:${value}`), holder }), { selector: (entry) => entry.tool, maxLength: 3 }),
      inline: fc.boolean(),
    }),
    { selector: (entry) => entry.name, maxLength: 3 },
  ),
  steps: fc.uniqueArray(
    fc.record({ id: identifier, server: identifier, serverHolder: holder, hash: hex(16).map((value) => `fnv1a64:${value}`), hashHolder: holder }),
    { selector: (entry) => entry.id, maxLength: 3 },
  ),
  noise: fc.array(fc.constantFrom('decorated', 'shadowed', 'comment'), { maxLength: 3 }),
});

/** The module's text, and each pin literal (quotes included) the reader must find, with what it pins. */
function render(spec: ModuleSpec): { text: string; expected: string[] } {
  const constants: string[] = [];
  const members: string[] = [];
  let counter = 0;
  /** How a value is written where it is used, per holder (a constant or a member is declared above). */
  const hold = (value: string, how: Holder): string => {
    const name = `K${counter++}`;
    if (how === 'literal') return `'${value}'`;
    if (how === 'constant') {
      constants.push(`const ${name} = '${value}';`);
      return name;
    }
    members.push(`  ${name}: '${value}',`);
    return `VALUES.${name}`;
  };
  const callee = { root: 'defineConnector', subpath: 'defineConnector', alias: 'dc', namespace: 'spec.defineConnector' }[spec.connectorImport];
  const imports = {
    root: "import { defineConnector, defineStack } from '@objectstack/spec';",
    subpath: "import { defineConnector } from '@objectstack/spec/integration';\nimport { defineStack } from '@objectstack/spec';",
    alias: "import { defineConnector as dc, defineStack } from '@objectstack/spec';",
    namespace: "import * as spec from '@objectstack/spec';\nconst { defineStack } = spec;",
  }[spec.connectorImport];
  const body: string[] = [];
  const inline: string[] = [];
  const expected: string[] = [];
  for (const connector of spec.connectors) {
    const snapshot = connector.pins.map((entry) => `${entry.tool}: ${hold(entry.pin, entry.holder)}`).join(', ');
    const literal = `{ name: '${connector.name}', label: 'L', type: 'api', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { ${snapshot} } } }`;
    if (connector.inline) inline.push(literal);
    else body.push(`export const c_${connector.name} = ${callee}(${literal});`);
    for (const entry of connector.pins) expected.push(`connector ${connector.name} ${entry.tool} ${entry.pin}`);
  }
  if (inline.length > 0) body.push(`export default defineStack({ name: 'app', objects: makeObjects(), connectors: [\n  ${inline.join(',\n  ')},\n] });`);
  for (const step of spec.steps) {
    body.push(`export const s_${step.id} = mcpInvoke$('${step.id}', { toolName: 'tool', server: ${hold(step.server, step.serverHolder)}, expectedSchemaHash: ${hold(step.hash, step.hashHolder)} });`);
    expected.push(`step ${step.id} ${step.server} ${step.hash}`);
  }
  for (const kind of spec.noise) {
    if (kind === 'decorated') body.push(`@register\nexport class Tools${counter++} {\n  @memo accessor cache = new Map();\n  @action() run() { return 1; }\n}`);
    if (kind === 'shadowed') body.push(`export function f${counter++}(dc, spec, defineConnector, mcpInvoke$) { return [dc({ name: x }), spec.defineConnector({ a: y }), defineConnector({ b: z }), mcpInvoke$('q', { toolName: w })]; }`);
    if (kind === 'comment') body.push(`// defineConnector({ name: 'not_read', provider: 'mcp' }) in a comment\n/* mcpInvoke$('no', { expectedSchemaHash: 'fnv1a64:0000000000000000' }) */`);
  }
  const text = [imports, "import { mcpInvoke$ } from '@loom/plugin-mcp';", ...constants, `const VALUES = {\n${members.join('\n')}\n} as const;`, ...body, ''].join('\n');
  return { text, expected };
}

test('what the reader reads is what the generator wrote, for modules mixing the real shapes', () => {
  fc.assert(
    fc.property(moduleSpec, (spec) => {
      const { text, expected } = render(spec);
      const analysis = analyzeSource(text, 'module.ts');
      const read: string[] = [];
      for (const instance of analysis.model.connector.instances) {
        for (const entry of instance.snapshot) {
          read.push(`connector ${instance.name?.value} ${entry.tool.value} ${entry.pin.value}`);
          // The pin's span is the literal that holds it, wherever it is declared.
          assert.equal(text.slice(entry.pin.span.offset, entry.pin.span.offset + entry.pin.span.length), `'${entry.pin.value}'`);
        }
      }
      for (const step of analysis.model.blueprint.steps) {
        const hash = step.mcp?.expectedSchemaHash;
        read.push(`step ${step.id?.value} ${step.mcp?.server?.value} ${hash?.value}`);
        if (hash) assert.equal(text.slice(hash.span.offset, hash.span.offset + hash.span.length), `'${hash.value}'`);
      }
      assert.deepEqual(read.sort(), [...expected].sort(), text);
      // Nothing the generator wrote is unreadable, and nothing it computed leaks into the pins.
      assert.deepEqual(analysis.problems.filter((found) => found.severity === 'error' || found.code === 'TP111').map((found) => found.message), [], text);
    }),
    { numRuns: 300 },
  );
});
