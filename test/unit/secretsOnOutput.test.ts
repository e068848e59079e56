/**
 * Which values count as credentials (those resolved from `${env:…}` and `${input:…}`), and the
 * process-wide scrubbing of output: raw and JSON-escaped forms, deep values, the store guard.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readMcpJsonServers } from '../../server/src/core/verify/registry';
import { containsKnownSecret, Redactor, redactKnownSecrets, redactKnownSecretsDeep } from '../../server/src/mcp/credentials';

describe('credentials on output', () => {
  test('a definition lists the values its ${env:…} and ${input:…} variables resolved to, and only those', () => {
    const text = JSON.stringify({
      mcpServers: {
        s: { command: 'node', args: ['--token=${input:api}'], env: { TOKEN: '${env:GH_TOKEN}', MODE: 'production', HOME_DIR: '${userHome}' } },
        h: { url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${env:GH_TOKEN}' } },
      },
    });
    const [stdio, http] = readMcpJsonServers(text, 'mcpServers', { kind: 'mcp-json' }, { workspaceFolder: '/w', userHome: '/home/u', env: { GH_TOKEN: 'ghp_abc123456789' }, inputs: { api: 'input-secret-42' } });
    assert.deepEqual(stdio?.secrets, ['input-secret-42', 'ghp_abc123456789']);
    assert.deepEqual(http?.secrets, ['ghp_abc123456789']);
  });

  test('known secrets are scrubbed in raw and JSON-escaped form, deeply, and guard store entries', () => {
    const secret = 'pa"ss\\word-7731';
    new Redactor().add(secret);
    assert.equal(redactKnownSecrets(`x ${secret} y`), 'x «redacted» y');
    assert.equal(redactKnownSecrets(JSON.stringify({ value: secret })), '{"value":"«redacted»"}');
    assert.deepEqual(redactKnownSecretsDeep({ a: [secret], [secret]: 1 }), { a: ['«redacted»'], '«redacted»': 1 });
    assert.ok(containsKnownSecret(JSON.stringify({ description: `uses ${secret}` })));
    assert.ok(containsKnownSecret('already «redacted» here'), 'redacted content is never written as a store entry');
    assert.ok(!containsKnownSecret('{"description":"harmless"}'));
  });
});
