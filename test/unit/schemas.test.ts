/**
 * The JSON Schemas the extension ships (schemas/*.schema.json) compile in Ajv's strict mode, accept
 * every fixture under test/fixtures/schemas/valid and reject every fixture under
 * test/fixtures/schemas/invalid for the reasons the fixture states.
 *
 * A fixture's kind comes from its name (`*.blueprint.json(c)` or `*.connector.json(c)`). An invalid
 * fixture states what must fail in `// expect {…}` comment lines at its top: an Ajv error object
 * subset with `keyword`, `instancePath` and optionally `params`. Every stated error must be found;
 * a fixture that fails for some other reason does not pass.
 *
 * Fixtures under test/fixtures/schemas/toolpin are what the schemas leave to Toolpin on purpose,
 * so that VS Code does not show one mistake twice (a schema problem beside Toolpin's diagnostic):
 * the schema accepts them, and Toolpin reports exactly the problems stated in `// toolpin {…}`
 * lines, each a code and the exact text its range covers.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { parse, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { analyzeDocument } from '../../server/src/core/documents/documents';
import { isParsedPin, parsePin } from '../../server/src/core/pins/pins';

/** The folder holding package.json, found by walking up (compiled tests run from out/test/unit). */
function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
}

const root = findRepoRoot(__dirname);
const fixtures = path.join(root, 'test', 'fixtures', 'schemas');

type Kind = 'blueprint' | 'connector' | 'policy';
const KINDS = ['blueprint', 'connector', 'policy'] as const;

/**
 * Keywords VS Code's JSON language service reads beside standard JSON Schema. They are annotations
 * only; declaring them keeps strict mode on for everything else (a misspelled keyword still fails).
 */
const EDITOR_KEYWORDS = [
  'markdownDescription',
  'defaultSnippets',
  'patternErrorMessage',
  'errorMessage',
  'deprecationMessage',
  'enumDescriptions',
  'markdownEnumDescriptions',
  'doNotSuggest',
  'allowComments',
  'allowTrailingCommas',
];

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addVocabulary(EDITOR_KEYWORDS);
  // Ajv ships no formats; "uri" here means an absolute URI with a scheme that the WHATWG URL parser accepts.
  ajv.addFormat('uri', {
    type: 'string',
    validate: (text: string) => {
      if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(text)) return false;
      try {
        new URL(text);
        return true;
      } catch {
        return false;
      }
    },
  });
  return ajv;
}

function readSchema(kind: Kind): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(root, 'schemas', `${kind}.schema.json`), 'utf8')) as Record<string, unknown>;
}

const ajv = createAjv();
const validators: Record<Kind, ValidateFunction> = {
  blueprint: ajv.compile(readSchema('blueprint')),
  connector: ajv.compile(readSchema('connector')),
  policy: ajv.compile(readSchema('policy')),
};

function kindOf(file: string): Kind {
  const match = /\.(blueprint|connector|policy)\.jsonc?$/.exec(file);
  if (!match) throw new Error(`${file}: a schema fixture is named *.blueprint.json(c), *.connector.json(c) or *.policy.json(c)`);
  return match[1] as Kind;
}

/** Parses a fixture as JSONC (comments and trailing commas allowed); a syntax error fails the test. */
function readFixture(file: string): { text: string; value: unknown } {
  const text = readFileSync(file, 'utf8');
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  assert.deepEqual(
    errors.map((error) => `${printParseErrorCode(error.error)} at offset ${error.offset}`),
    [],
    `${path.basename(file)} is well-formed JSONC, so only the schema decides`,
  );
  return { text, value };
}

function fixtureFiles(folder: 'valid' | 'invalid' | 'toolpin'): string[] {
  return readdirSync(path.join(fixtures, folder))
    .filter((name) => /\.jsonc?$/.test(name))
    .sort()
    .map((name) => path.join(fixtures, folder, name));
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((error) => `  ${error.keyword} at "${error.instancePath}" ${JSON.stringify(error.params)}: ${error.message ?? ''}`).join('\n');
}

interface ExpectedError {
  keyword: string;
  instancePath: string;
  params?: Record<string, unknown>;
}

function expectationsOf(text: string, file: string): ExpectedError[] {
  const expected = [...text.matchAll(/^\/\/ expect (\{.*\})\s*$/gm)].map((match) => JSON.parse(match[1]!) as ExpectedError);
  assert.ok(expected.length > 0, `${path.basename(file)} states at least one "// expect {…}" line`);
  for (const entry of expected) {
    assert.equal(typeof entry.keyword, 'string', `${path.basename(file)}: an expectation names a keyword`);
    assert.equal(typeof entry.instancePath, 'string', `${path.basename(file)}: an expectation names an instancePath`);
  }
  return expected;
}

function matches(error: ErrorObject, expected: ExpectedError): boolean {
  if (error.keyword !== expected.keyword || error.instancePath !== expected.instancePath) return false;
  const params = error.params as Record<string, unknown>;
  return Object.entries(expected.params ?? {}).every(([key, value]) => params[key] === value);
}

describe('JSON Schemas', () => {
  for (const kind of KINDS) {
    test(`${kind}.schema.json is a draft-07 schema with its identifier`, () => {
      const schema = readSchema(kind);
      assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
      assert.equal(schema.$id, `https://toolpin.dev/schemas/${kind}.schema.json`);
      assert.ok(ajv.validateSchema(schema), `valid against the draft-07 meta-schema:\n${describeErrors(ajv.errors)}`);
    });

    test(`every property in ${kind}.schema.json has a description (the hover text)`, () => {
      const missing: string[] = [];
      const visit = (node: unknown, where: string): void => {
        if (Array.isArray(node)) {
          node.forEach((child, index) => visit(child, `${where}/${index}`));
          return;
        }
        if (typeof node !== 'object' || node === null) return;
        for (const [key, child] of Object.entries(node)) {
          if (key === 'defaultSnippets' || key === 'examples' || key === 'default' || key === 'const' || key === 'enum') continue;
          if (key === 'properties' && typeof child === 'object' && child !== null && !where.endsWith('/if')) {
            for (const [name, property] of Object.entries(child as Record<string, unknown>)) {
              if (property === true) continue; // a bare `true` only declares the name (inside if/required)
              const described = typeof property === 'object' && property !== null && ('description' in property || '$ref' in property);
              if (!described) missing.push(`${where}/properties/${name}`);
            }
          }
          visit(child, `${where}/${key}`);
        }
      };
      visit(readSchema(kind), '#');
      assert.deepEqual(missing, []);
    });
  }

  test('there are enough fixtures of both kinds', () => {
    const valid = fixtureFiles('valid').map(kindOf);
    const invalid = fixtureFiles('invalid').map(kindOf);
    assert.ok(valid.length >= 5 && invalid.length >= 8, `${valid.length} valid, ${invalid.length} invalid`);
    for (const kind of KINDS) {
      assert.ok(valid.includes(kind) && invalid.includes(kind), `valid and invalid ${kind} fixtures exist`);
    }
  });
});

describe('valid fixtures pass', () => {
  for (const file of fixtureFiles('valid')) {
    test(path.basename(file), () => {
      const validate = validators[kindOf(file)];
      const { value } = readFixture(file);
      assert.ok(validate(value), `unexpected errors:\n${describeErrors(validate.errors)}`);
    });
  }
});

describe('invalid fixtures fail for the stated reasons', () => {
  for (const file of fixtureFiles('invalid')) {
    test(path.basename(file), () => {
      const validate = validators[kindOf(file)];
      const { text, value } = readFixture(file);
      const expected = expectationsOf(text, file);
      assert.equal(validate(value), false, `${path.basename(file)} is rejected`);
      const errors = validate.errors ?? [];
      for (const entry of expected) {
        assert.ok(
          errors.some((error) => matches(error, entry)),
          `expected ${JSON.stringify(entry)} among:\n${describeErrors(errors)}`,
        );
      }
    });
  }
});

describe('pin syntax is left to Toolpin, which reports it once', () => {
  for (const file of fixtureFiles('toolpin')) {
    test(path.basename(file), () => {
      const kind = kindOf(file);
      if (kind === 'policy') throw new Error(`${path.basename(file)}: policy fixtures are not Toolpin documents`);
      const validate = validators[kind];
      const { text, value } = readFixture(file);
      assert.ok(validate(value), `the schema accepts it, so VS Code shows Toolpin's problem alone:\n${describeErrors(validate.errors)}`);
      const stated = [...text.matchAll(/^\/\/ toolpin (\{.*\})\s*$/gm)].map((match) => JSON.parse(match[1]!) as { code: string; covers: string });
      assert.ok(stated.length > 0, `${path.basename(file)} states at least one "// toolpin {…}" line`);
      const found = analyzeDocument(kind, text).problems.map((problem) => ({ code: problem.code, covers: text.slice(problem.span.offset, problem.span.offset + problem.span.length) }));
      assert.deepEqual(found, stated);
    });
  }
});

describe('schema details', () => {
  const blueprint = (step: Record<string, unknown>): unknown => ({ blueprint: 'b', formatVersion: 1, steps: [step] });

  test('the schema pin must be a string; its syntax is TP204, not a schema pattern', () => {
    const pin = (hash: unknown): boolean =>
      validators.blueprint(blueprint({ id: 'a', effect: 'mcp.invoke', input: { toolName: 't', expectedSchemaHash: hash } })) as boolean;
    assert.equal(pin('fnv1a64:a76fe8d6d023fca0'), true);
    assert.equal(pin(7), false, 'not a string');
    for (const malformed of ['fnv1a64:a76fe8d6d023fca', 'fnv1a64:a76fe8d6d023fca00', 'a76fe8d6d023fca0', ' fnv1a64:a76fe8d6d023fca0']) {
      assert.equal(pin(malformed), true, `${malformed}: the schema leaves it to Toolpin`);
      assert.equal(isParsedPin(parsePin(malformed, 'fnv1a64')), false, `${malformed}: Toolpin rejects it`);
    }
  });

  test('a tool pin must be a string; its syntax is TP306, not a schema pattern', () => {
    const hex = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
    const pin = (value: unknown): boolean =>
      validators.connector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: value } } }) as boolean;
    assert.equal(pin(`sha256:${hex}`), true);
    assert.equal(pin(hex), true);
    assert.equal(pin(null), false, 'not a string');
    for (const malformed of [`sha256:${hex.slice(1)}`, `${hex}0`, `SHA256:${hex}`]) {
      assert.equal(pin(malformed), true, `${malformed}: the schema leaves it to Toolpin`);
      assert.equal(isParsedPin(parsePin(malformed, 'sha256')), false, `${malformed}: Toolpin rejects it`);
    }
  });

  test('only mcp.invoke steps need input.toolName', () => {
    assert.equal(validators.blueprint(blueprint({ id: 'a', effect: 'log.write', input: { anything: 1 } })), true);
    assert.equal(validators.blueprint(blueprint({ id: 'a', effect: 'mcp.invoke', input: { anything: 1 } })), false);
  });

  test('providerConfig is checked only for the mcp provider', () => {
    assert.equal(validators.connector({ name: 'c', provider: 'openapi', providerConfig: { spec: './x.json' } }), true);
    assert.equal(validators.connector({ name: 'c', provider: 'mcp', providerConfig: { spec: './x.json' } }), false);
  });

  test('the three file shapes are told apart: instance, array, stack', () => {
    const instance = { name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://mcp.example.com/mcp' } } };
    assert.equal(validators.connector(instance), true);
    assert.equal(validators.connector([instance, { ...instance, name: 'd' }]), true);
    assert.equal(validators.connector({ connectors: [instance] }), true);
    assert.equal(validators.connector([]), true);
    assert.equal(validators.connector('github_tools'), false);
    assert.equal(validators.connector({ connectors: [{ ...instance, providerConfig: { transport: { kind: 'sse', url: 'https://mcp.example.com/sse' } } }] }), false, 'a stack instance is checked');
  });
});
