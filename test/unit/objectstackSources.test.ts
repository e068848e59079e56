/**
 * TypeScript as the real ObjectStack repository writes it (test/fixtures/objectstack, copied byte
 * for byte from objectstack-ai/objectstack): no false errors on valid code, no false passes on the
 * shapes it uses (package-root, namespace and aliased imports, inline stack connectors, pins kept
 * as constants), and no guesses where a value is computed (issue 23). Each test failed before the
 * change it covers.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { analyzeSource } from '../../server/src/core/documents/source/analyzeSource';
import { applyTextEdits, replacePinEdit } from '../../server/src/core/documents/fixes';
import type { Span } from '../../server/src/core/problems';
import { connectorServers } from '../../server/src/core/verify/registry';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/objectstack');
const TOOL_A = `sha256:${'a'.repeat(64)}`;
const SCHEMA_A = 'fnv1a64:0123456789abcdef';

function textOf(text: string, span: Span | undefined): string | undefined {
  return span ? text.slice(span.offset, span.offset + span.length) : undefined;
}

/** A defineConnector argument for an MCP connector with one pin. */
function mcpConnector(name: string, pin = TOOL_A): string {
  return `{ name: '${name}', label: 'L', type: 'api', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { echo_upper: '${pin}' } } }`;
}

function pinsOf(text: string, fileName = 'm.ts'): Array<[string | undefined, string]> {
  const analysis = analyzeSource(text, fileName);
  return analysis.model.connector.instances.flatMap((instance) => instance.snapshot.map((entry): [string | undefined, string] => [instance.name?.value, entry.pin.value]));
}

describe('ObjectStack sources: no false errors', () => {
  test('the untouched showcase connectors module has no error and no warning; its four connectors are read', () => {
    const text = readFileSync(path.join(FIXTURES, 'showcase/src/system/connectors/index.ts'), 'utf8');
    const analysis = analyzeSource(text, 'index.ts');
    assert.deepEqual(analysis.problems.filter((found) => found.severity === 'error' || found.severity === 'warning').map((found) => `${found.code} ${found.message}`), []);
    assert.deepEqual(analysis.model.connector.instances.map((instance) => instance.name?.value), ['showcase_status_api', 'showcase_status_openapi', 'showcase_mcp_tools', 'showcase_erp_catalog']);
  });

  test('the showcase stack config, which imports defineStack from the package root, reads without problems', () => {
    const text = readFileSync(path.join(FIXTURES, 'showcase/objectstack.config.ts'), 'utf8');
    assert.deepEqual(analyzeSource(text, 'objectstack.config.ts').problems.map((found) => found.code), []);
  });

  test('TypeScript 5 decorators on classes, members and auto-accessors parse; a connector inside a decorated class is read', () => {
    const text = `import { defineConnector } from '@objectstack/spec';
@register
export class Tools {
  @inject() private readonly log!: Logger;
  @memo accessor cache = new Map();
  @dec static accessor other = 1;
  @action()
  connector() {
    return defineConnector(${mcpConnector('decorated')});
  }
}
@sealed export class After {}
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.problems.map((found) => found.code), []);
    assert.deepEqual(pinsOf(text), [['decorated', TOOL_A]]);
  });

  test('one report per problem per position', () => {
    // A malformed pin kept in a constant that ten steps share is one literal: one report, at it.
    const uses = Array.from({ length: 10 }, (_, index) => `export const s${index} = mcpInvoke$('s${index}', { toolName: 't', server: 'x', expectedSchemaHash: BAD });`).join('\n');
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nconst BAD = 'fnv1a64:not-hex';\n${uses}\n`;
    const problems = analyzeSource(text).problems;
    const keys = problems.map((found) => `${found.code}@${found.span.offset}`);
    assert.deepEqual(keys, [...new Set(keys)]);
    assert.deepEqual(problems.map((found) => [found.code, textOf(text, found.span)]), [['TP204', "'fnv1a64:not-hex'"]]);
  });
});

describe('ObjectStack sources: no false passes', () => {
  test('every entry point and import form of defineConnector is read', () => {
    const forms = [
      `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector(${mcpConnector('root')});`,
      `import { defineConnector as dc } from '@objectstack/spec/integration';\nexport const c = dc(${mcpConnector('alias')});`,
      `import * as spec from '@objectstack/spec';\nexport const c = spec.defineConnector(${mcpConnector('namespace')});`,
      `import * as spec from '@objectstack/spec';\nconst { defineConnector: make } = spec;\nexport const c = make(${mcpConnector('destructured')});`,
      `import { defineConnector } from '@objectstack/spec';\nconst define = defineConnector;\nexport const c = define(${mcpConnector('reassigned')});`,
      `const spec = require('@objectstack/spec');\nexports.c = spec.defineConnector(${mcpConnector('commonjs')});`,
    ];
    for (const text of forms) assert.equal(pinsOf(text).length, 1, text);
  });

  test('an alias shadowed by a local binding is not the function (a minified bundle)', () => {
    const text = `import{defineConnector as e}from"@objectstack/spec";export const a=e(${mcpConnector('real')});function f(e){return e({name:n,provider:p})}const g=(e)=>e({x:y});try{}catch(e){e({z:1})}{let e=h;e({w:k})}function v(){var e=q;if(1){e({u:1})}}`;
    const analysis = analyzeSource(text, 'bundle.js');
    assert.deepEqual(pinsOf(text, 'bundle.js'), [['real', TOOL_A]]);
    assert.deepEqual(analysis.problems.filter((found) => found.code === 'TP110').map((found) => textOf(text, found.span)), []);
  });

  test('connectors written inline in defineStack({ connectors: [ … ] }) are read, and nothing else of the stack', () => {
    const text = `import { defineStack } from '@objectstack/spec';
import { allConnectors } from './connectors';
export default defineStack({
  manifest: { id: 'app', version: computeVersion() },
  plugins: [new Plugin()],
  connectors: [...allConnectors, ${mcpConnector('inline')}],
});
`;
    const analysis = analyzeSource(text, 'objectstack.config.ts');
    assert.deepEqual(pinsOf(text), [['inline', TOOL_A]]);
    assert.deepEqual(analysis.problems.map((found) => found.code), []);
  });

  test('pins kept as same-module constants are read at the constant, and a re-pin rewrites the literal there only', () => {
    const text = `import { defineConnector } from '@objectstack/spec';
import { mcpInvoke$ } from '@loom/plugin-mcp';
const PINS = { echo: '${TOOL_A}', schema: "${SCHEMA_A}" } as const;
const SERVERS = { tools: 'tools' } as const;
export const c = defineConnector({ name: 'tools', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { echo_upper: PINS.echo } } });
export const s = mcpInvoke$('s', { toolName: 'echo_upper', server: SERVERS.tools, expectedSchemaHash: PINS['schema'] });
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.problems.map((found) => found.code), []);
    const entry = analysis.model.connector.instances[0]!.snapshot[0]!;
    assert.equal(entry.pin.value, TOOL_A);
    assert.equal(textOf(text, entry.pin.span), `'${TOOL_A}'`);
    const step = analysis.model.blueprint.steps[0]!;
    assert.equal(step.mcp?.server?.value, 'tools');
    assert.equal(step.mcp?.expectedSchemaHash?.value, SCHEMA_A);
    const newTool = `sha256:${'c'.repeat(64)}`;
    const edited = applyTextEdits(text, [replacePinEdit(entry.pin.span, newTool, text)]);
    assert.equal(edited, text.replace(`'${TOOL_A}'`, `'${newTool}'`));
  });
});

describe('ObjectStack sources: pins in other modules', () => {
  test('pins imported from another module (./pins) are pins that cannot be verified, naming the import; never dropped', () => {
    const text = `import { defineConnector } from '@objectstack/spec';
import { mcpInvoke$ } from '@loom/plugin-mcp';
import { PINS, SNAPSHOT } from './pins';
import * as pins from './pins';
export const c = defineConnector({ name: 'tools', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { echo_upper: PINS.echo } } });
export const d = defineConnector({ name: 'more', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: SNAPSHOT } });
export const s = mcpInvoke$('s', { toolName: 'echo_upper', server: 'tools', expectedSchemaHash: pins.PINS['schema'] });
export const t = mcpInvoke$('t', { toolName: 'add', server: 'tools', expectedSchemaHash: pinFor('add') });
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(
      analysis.model.computedPins.map((pin) => [pin.kind, pin.tool, pin.server, textOf(text, pin.span)]),
      [
        ['tool', 'echo_upper', 'tools', 'PINS.echo'],
        ['tool', '(every tool of the snapshot)', 'more', 'SNAPSHOT'],
        ['schema', 'echo_upper', 'tools', "pins.PINS['schema']"],
        ['schema', 'add', 'tools', "pinFor('add')"],
      ],
    );
    const reasons = analysis.model.computedPins.map((pin) => pin.reason);
    assert.match(reasons[0]!, /^it is PINS\.echo, imported from '\.\/pins', and Toolpin reads pin values only in the module that uses them/);
    assert.match(reasons[2]!, /imported from '\.\/pins'/);
    assert.match(reasons[3]!, /^it is computed at run time \(pinFor\('add'\)\)/);
    assert.deepEqual(analysis.problems.map((found) => found.code), ['TP110', 'TP110', 'TP110', 'TP110']);
    assert.match(analysis.problems[0]!.message, /^"providerConfig\.toolsSnapshot\.echo_upper" of connector "tools" cannot be verified: it is PINS\.echo, imported from '\.\/pins'/);
  });

  test('a local binding that shadows an imported name is not the import', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';
import { PINS } from './pins';
export function make(PINS: Record<string, string>) {
  return mcpInvoke$('s', { toolName: 'echo_upper', server: 'tools', expectedSchemaHash: PINS.schema });
}
`;
    const [pin] = analyzeSource(text).model.computedPins;
    assert.equal(textOf(text, pin?.span), 'PINS.schema');
    assert.match(pin!.reason, /^it is computed at run time/);
  });
});

describe('ObjectStack sources: no guesses', () => {
  test('a provider Toolpin can read is resolved: a same-module constant, a spread of shared defaults, MCP_PROVIDER_KEY', () => {
    const forms = [
      `import { defineConnector } from '@objectstack/spec';\nconst PROVIDER = 'mcp';\nexport const c = defineConnector({ name: 'a', provider: PROVIDER, providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: '${TOOL_A}' } } });`,
      `import { defineConnector } from '@objectstack/spec';\nconst MCP = { provider: 'mcp', type: 'api' } as const;\nexport const c = defineConnector({ ...MCP, name: 'a', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: '${TOOL_A}' } } });`,
      `import { defineConnector } from '@objectstack/spec';\nimport { MCP_PROVIDER_KEY } from '@objectstack/connector-mcp';\nexport const c = defineConnector({ name: 'a', provider: MCP_PROVIDER_KEY, providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: '${TOOL_A}' } } });`,
    ];
    for (const text of forms) {
      const analysis = analyzeSource(text);
      assert.deepEqual(analysis.problems.map((found) => found.code), [], text);
      const [server] = connectorServers('/w/a.ts', analysis.model.connector, '/w');
      assert.equal(server?.unusable, undefined, text);
      assert.equal(analysis.model.connector.instances[0]?.snapshot.length, 1, text);
    }
  });

  test('a provider that cannot be read keeps the pins as "cannot verify", saying the provider is computed; never TP309', () => {
    const text = `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector({ name: 'a', provider: pickProvider(), providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: '${TOOL_A}' } } });`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.problems.map((found) => found.code), ['TP110']);
    assert.equal(analysis.model.connector.instances[0]?.snapshot.length, 1, 'the pin is kept');
    const [server] = connectorServers('/w/a.ts', analysis.model.connector, '/w');
    assert.match(server?.unusable ?? '', /^its provider is computed at run time \(pickProvider\(\)\)/);
  });

  test('a computed provider that may be another one: its free-form providerConfig gets no MCP shape problem', () => {
    const text = `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector({ name: 'a', provider: pickProvider(), providerConfig: { baseUrl: 'https://api.example.com' } });`;
    assert.deepEqual(analyzeSource(text).problems.map((found) => found.code), ['TP110']);
  });

  test('a computed server is never replaced by a guess; an as-const member is read exactly', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nexport const s = mcpInvoke$('s', { toolName: 'echo_upper', server: serverFor(env), expectedSchemaHash: '${SCHEMA_A}' });`;
    const step = analyzeSource(text).model.blueprint.steps[0]!;
    assert.equal(step.mcp?.server, undefined);
    assert.equal(step.mcp?.serverComputed, 'serverFor(env)');
  });

  test('a computed credentialRef: the credential cannot be resolved, so the server is not contacted', () => {
    const text = `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector({ name: 'a', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://mcp.example.com/mcp' }, toolsSnapshot: { t: '${TOOL_A}' } }, auth: { type: 'bearer', credentialRef: refFor('a') } });`;
    const [server] = connectorServers('/w/a.ts', analyzeSource(text).model.connector, '/w');
    assert.match(server?.unusable ?? '', /^its credential could not be resolved: auth.credentialRef is computed at run time \(refFor\('a'\)\)/);
  });
});
