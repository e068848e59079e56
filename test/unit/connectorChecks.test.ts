import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { messagesOf, problemsOf, type SeenProblem } from '../support/checkHelpers';

const PIN_A = 'sha256:' + 'a'.repeat(64);
const PIN_B = 'b'.repeat(64);

function connector(fields: string): string {
  return `{
  "name": "github_tools",
  "label": "GitHub (MCP)",
  "type": "api",
  "provider": "mcp",
  ${fields}
}`;
}
const STDIO = `"providerConfig": { "transport": { "kind": "stdio", "command": "node", "args": ["./server.mjs"] } }`;

describe('connector checks: valid files', () => {
  test('an http connector with include, pins and bearer auth', () => {
    const text = connector(`"providerConfig": {
      "transport": { "kind": "http", "url": "https://mcp.example.com/mcp", "headers": { "X-Team": "core" } },
      "include": ["create_issue", "add_labels"],
      "toolsSnapshot": { "create_issue": "${PIN_A}", "add_labels": "${PIN_B}" }
    },
    "auth": { "type": "bearer", "credentialRef": "GITHUB_MCP_TOKEN" }`);
    assert.deepEqual(problemsOf('connector', text), []);
    const { model } = analyzeConnector(text);
    const instance = model.instances[0]!;
    assert.equal(instance.name?.value, 'github_tools');
    assert.equal(instance.transport?.kind, 'http');
    assert.deepEqual(instance.include?.map((entry) => entry.value), ['create_issue', 'add_labels']);
    assert.deepEqual(instance.snapshot.map((entry) => [entry.tool.value, entry.parsed?.style]), [['create_issue', 'prefixed'], ['add_labels', 'bare']]);
    assert.deepEqual(instance.auth, { type: 'bearer', credentialRef: 'GITHUB_MCP_TOKEN' });
  });
  test('a stdio connector, an array file and a stack file', () => {
    assert.deepEqual(problemsOf('connector', connector(STDIO)), []);
    assert.deepEqual(problemsOf('connector', `[${connector(STDIO)}, ${connector(STDIO).replace('github_tools', 'other_tools')}]`), []);
    const stack = `{ "connectors": [${connector(STDIO)}, { "name": "crm", "provider": "openapi", "providerConfig": { "spec": "./crm.yaml" } }] }`;
    assert.deepEqual(problemsOf('connector', stack), []);
    assert.equal(analyzeConnector(stack).model.instances.length, 2);
  });
  test('api-key auth defaults its header to X-API-Key', () => {
    const { model } = analyzeConnector(connector(`${STDIO}, "auth": { "type": "api-key", "credentialRef": "KEY" }`));
    assert.deepEqual(model.instances[0]!.auth, { type: 'api-key', credentialRef: 'KEY', headerName: 'X-API-Key' });
  });
  test('environment references in headers are not literals', () => {
    const text = connector(`"providerConfig": { "transport": { "kind": "http", "url": "http://127.0.0.1:3000/mcp", "headers": { "Authorization": "\${env:MCP_AUTH}" } } }`);
    assert.deepEqual(problemsOf('connector', text), []);
  });
});

describe('connector checks: each failing case names its code and its exact range', () => {
  const cases: Array<[string, string, SeenProblem[]]> = [
    ['TP102 unknown providerConfig key', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "toolSnapshot": {} }`), [{ code: 'TP102', covers: '"toolSnapshot"' }]],
    ['TP102 key beside connectors', `{ "connectors": [], "extra": 1 }`, [{ code: 'TP102', covers: '"extra"' }]],
    ['TP103 toolsSnapshot value not a string', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "toolsSnapshot": { "t": 1 } }`), [{ code: 'TP103', covers: '1' }]],
    ['TP103 root a string', '"github"', [{ code: 'TP103', covers: '"github"' }]],
    ['TP104 missing provider', `{ "name": "x" }`, [{ code: 'TP104', covers: '{' }]],
    ['TP104 mcp without providerConfig', connector(`"description": "d"`), [{ code: 'TP104', covers: '"mcp"' }]],
    ['TP300 bad name', connector(STDIO).replace('github_tools', 'GitHub-Tools'), [{ code: 'TP300', covers: '"GitHub-Tools"' }]],
    ['TP301 unknown transport kind', connector(`"providerConfig": { "transport": { "kind": "websocket", "url": "ws://x" } }`), [{ code: 'TP301', covers: '"websocket"' }]],
    ['TP301 transport without kind', connector(`"providerConfig": { "transport": { "command": "node" } }`), [{ code: 'TP301', covers: '{' }]],
    ['TP302 stdio without command', connector(`"providerConfig": { "transport": { "kind": "stdio", "args": [] } }`), [{ code: 'TP302', covers: '"stdio"' }]],
    ['TP302 http without url', connector(`"providerConfig": { "transport": { "kind": "http" } }`), [{ code: 'TP302', covers: '"http"' }]],
    ['TP302 http with a relative url', connector(`"providerConfig": { "transport": { "kind": "http", "url": "/mcp" } }`), [{ code: 'TP302', covers: '"/mcp"' }]],
    ['TP303 authored cwd', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node", "cwd": "./srv" } }`), [{ code: 'TP303', covers: '"cwd"' }]],
    ['TP304 unknown auth type', connector(`${STDIO}, "auth": { "type": "oauth" }`), [{ code: 'TP304', covers: '"oauth"' }]],
    ['TP304 bearer without credentialRef', connector(`${STDIO}, "auth": { "type": "bearer" }`), [{ code: 'TP304', covers: '"bearer"' }]],
    ['TP304 a literal token in auth', connector(`${STDIO}, "auth": { "type": "bearer", "credentialRef": "T", "token": "abc" }`), [{ code: 'TP304', covers: '"token"' }]],
    ['TP304 credentialRef holding a secret', connector(`${STDIO}, "auth": { "type": "bearer", "credentialRef": "Bearer ghp_123" }`), [{ code: 'TP304', covers: '"Bearer ghp_123"' }]],
    ['TP304 basic without username', connector(`${STDIO}, "auth": { "type": "basic", "credentialRef": "P" }`), [{ code: 'TP304', covers: '"basic"' }]],
    ['TP305 pin excluded by include', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "include": ["a"], "toolsSnapshot": { "a": "${PIN_A}", "b": "${PIN_A}" } }`), [{ code: 'TP305', covers: '"b"' }]],
    ['TP306 malformed tool pin', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "toolsSnapshot": { "a": "sha256:abc" } }`), [{ code: 'TP306', covers: '"sha256:abc"' }]],
    ['TP306 schema pin where a tool pin belongs', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "toolsSnapshot": { "a": "fnv1a64:0000000000000000" } }`), [{ code: 'TP306', covers: '"fnv1a64:0000000000000000"' }]],
    ['TP307 duplicate connector name', `[${connector(STDIO)}, ${connector(STDIO)}]`, [{ code: 'TP307', covers: '"github_tools"' }]],
    ['TP308 duplicate include entry', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "include": ["a", "a"] }`), [{ code: 'TP308', covers: '"a"' }]],
    ['TP309 pins on a non-MCP connector', `{ "name": "crm", "provider": "openapi", "providerConfig": { "toolsSnapshot": {} } }`, [{ code: 'TP309', covers: '"toolsSnapshot"' }]],
    ['TP205 literal Authorization header', connector(`"providerConfig": { "transport": { "kind": "http", "url": "https://x.test/mcp", "headers": { "Authorization": "Bearer abc" } } }`), [{ code: 'TP205', covers: '"Bearer abc"' }]],
    ['TP205 literal token in env', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node", "env": { "GITHUB_TOKEN": "ghp_1" } } }`), [{ code: 'TP205', covers: '"ghp_1"' }]],
  ];
  for (const [name, text, expected] of cases) {
    test(name, () => assert.deepEqual(problemsOf('connector', text), expected));
  }
});

describe('connector checks: messages', () => {
  test('the cwd message says what the runtime does instead', () => {
    const [message] = messagesOf('connector', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node", "cwd": "." } }`));
    assert.match(message!, /ignored by the runtime/);
  });
  test('a secret value never appears in a message', () => {
    const messages = messagesOf('connector', connector(`"providerConfig": { "transport": { "kind": "stdio", "command": "node", "env": { "API_KEY": "sk-live-SECRET" } } }, "auth": { "type": "bearer", "credentialRef": "T", "password": "hunter2" }`));
    assert.equal(messages.length, 2);
    for (const message of messages) {
      assert.doesNotMatch(message, /sk-live-SECRET|hunter2/);
    }
  });
});
