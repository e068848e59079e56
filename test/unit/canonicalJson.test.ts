import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import canonicalizeFromNpm from 'canonicalize';
import { CanonicalJsonError, type CanonicalJsonErrorKind, canonicalJson, carefulCanonicalJson } from '../../server/src/core/pins/canonicalJson';

describe('canonicalJson: RFC 8785 behaviour', () => {
  const cases: Array<[string, unknown, string]> = [
    ['literals', [null, true, false], '[null,true,false]'],
    ['no whitespace, keys sorted', { b: 1, a: { d: [1, 2], c: 'x' } }, '{"a":{"c":"x","d":[1,2]},"b":1}'],
    ['integer-like keys sort as strings ("10" before "2")', { '2': 'two', '10': 'ten', '1': 'one' }, '{"1":"one","10":"ten","2":"two"}'],
    // RFC 8785 §3.2.3 example: keys compared by UTF-16 code units, so U+20AC (€) sorts before
    // U+D83D (the high surrogate of 😀) although 😀's code point is larger, and "\r" comes first.
    ['UTF-16 code-unit key order', { '€': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '😀': 'Emoji: Grinning Face', '\u0080': 'Control', 'ö': 'Latin Small Letter O With Diaeresis' },
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'],
    ['arrays keep their order', [3, 1, 2], '[3,1,2]'],
    ['numbers as ECMAScript prints them', [1e21, 1e-7, -0, 0.1, 100, 1.5e300, 5e-324, -1.25], '[1e+21,1e-7,0,0.1,100,1.5e+300,5e-324,-1.25]'],
    ['string escapes as JSON.stringify', ['\u0000\u001f', '"\\', '\b\f\n\r\t', '\u2028\u2029', 'é€😀', '/'], '["\\u0000\\u001f","\\"\\\\","\\b\\f\\n\\r\\t","\u2028\u2029","é€😀","/"]'],
    ['empty containers', { a: {}, b: [] }, '{"a":{},"b":[]}'],
    ['null-prototype object is plain', Object.assign(Object.create(null), { z: 1, y: 2 }), '{"y":2,"z":1}'],
    // eslint-disable-next-line no-loss-of-precision -- the RFC's own sample literal, rounded by design
    ['RFC 8785 §3.2.2 numbers sample', { numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001] }, '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}'],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => assert.equal(canonicalJson(input), expected));
  }
});

describe('canonicalJson: anything that is not plain JSON throws a typed error', () => {
  const cases: Array<[string, unknown, CanonicalJsonErrorKind, string]> = [
    ['undefined at the root', undefined, 'undefined', ''],
    ['undefined in an object', { a: undefined }, 'undefined', '/a'],
    ['undefined in an array', [1, undefined], 'undefined', '/1'],
    ['array hole', [1, , 3], 'undefined', '/1'], // eslint-disable-line no-sparse-arrays
    ['function', { f: () => 1 }, 'function', '/f'],
    ['symbol value', { s: Symbol('x') }, 'symbol', '/s'],
    ['symbol key', { [Symbol('k')]: 1 }, 'symbol', ''],
    ['BigInt', { n: 10n }, 'bigint', '/n'],
    ['NaN', [NaN], 'non-finite-number', '/0'],
    ['Infinity', { x: Infinity }, 'non-finite-number', '/x'],
    ['-Infinity', { x: -Infinity }, 'non-finite-number', '/x'],
    ['Date', { d: new Date(0) }, 'non-plain-object', '/d'],
    ['Map', new Map(), 'non-plain-object', ''],
    ['class instance', { c: new (class Point { x = 1; })() }, 'non-plain-object', '/c'],
    ['lone high surrogate in a value', { a: 'x\ud800' }, 'lone-surrogate', '/a'],
    ['lone low surrogate in a key', { '\udc00': 1 }, 'lone-surrogate', '/\udc00'],
    ['key path escapes ~ and /', { 'a/b~c': undefined }, 'undefined', '/a~1b~0c'],
  ];
  for (const [name, input, kind, path] of cases) {
    test(name, () => {
      assert.throws(() => canonicalJson(input), (error: unknown) => {
        assert.ok(error instanceof CanonicalJsonError, 'a CanonicalJsonError');
        assert.equal(error.kind, kind);
        assert.equal(error.path, path);
        return true;
      });
    });
  }
  test('a cycle is an error, not a stack overflow', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => canonicalJson(cyclic), (error: unknown) => error instanceof CanonicalJsonError && error.kind === 'cycle');
  });
  test('a shared (non-cyclic) reference is fine', () => {
    const shared = { x: 1 };
    assert.equal(canonicalJson({ a: shared, b: shared }), '{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('canonicalJson: properties', () => {
  // fast-check's jsonValue generates only plain JSON (no -0 surprises: canonical form prints 0).
  const json = fc.jsonValue({ maxDepth: 5 });

  test('equals an independent RFC 8785 implementation from npm (canonicalize) on random JSON', () => {
    fc.assert(
      fc.property(json, (value) => {
        assert.equal(canonicalJson(value), canonicalizeFromNpm(value));
      }),
      { numRuns: 2000 },
    );
  });

  test('equals it on objects with adversarial keys (integer-like, astral, escapes)', () => {
    const key = fc.oneof(fc.nat().map(String), fc.string({ unit: 'binary' }), fc.constantFrom('10', '2', '__proto__x', 'é', '😀', '\u20ac', '\r'));
    const value = fc.dictionary(key, fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'binary' })));
    fc.assert(
      fc.property(value, (object) => {
        assert.equal(canonicalJson(object), canonicalizeFromNpm(object));
      }),
      { numRuns: 1000 },
    );
  });

  test('the fast path and the careful path agree on random JSON, including lone-surrogate strings', () => {
    const withOddStrings = fc.oneof(fc.jsonValue({ maxDepth: 5 }), fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })));
    fc.assert(
      fc.property(withOddStrings, (value) => {
        let fast: string | Error;
        let careful: string | Error;
        try { fast = canonicalJson(value); } catch (error) { fast = error as Error; }
        try { careful = carefulCanonicalJson(value); } catch (error) { careful = error as Error; }
        assert.deepEqual(fast, careful);
      }),
      { numRuns: 2000 },
    );
  });

  test('member names in any order and number (insertion sort up to 16, sort() beyond), recurring across calls', () => {
    // A small alphabet, so that names recur (the serialized-name cache) and collide in prefixes.
    const name = fc.oneof(fc.string({ unit: fc.constantFrom('a', 'b', 'A', '1', '"', '\\', '\n', 'é', '😀'), maxLength: 6 }), fc.string({ unit: 'grapheme', minLength: 60, maxLength: 80 }));
    const record = fc.uniqueArray(name, { maxLength: 40 }).chain((names) =>
      fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }).map((order) => Object.fromEntries(order.map((key, index) => [key, index]))),
    );
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 3 }), (records) => {
        for (const object of records) {
          const sorted = Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]]));
          const reversed = Object.fromEntries(Object.keys(object).sort().reverse().map((key) => [key, object[key]]));
          const expected = canonicalizeFromNpm(object);
          assert.equal(canonicalJson(object), expected);
          assert.equal(canonicalJson(sorted), expected);
          assert.equal(canonicalJson(reversed), expected);
          assert.equal(carefulCanonicalJson(object), expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('leaves (primitive arrays, objects with names in order) equal the npm implementation, escapes included', () => {
    const primitive = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('\\u0041', '\u0000', '\u001f', '"', '\\', '\u2028'), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    const sortedLeaf = fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), primitive, { maxKeys: 6 }).map((object) => Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]])));
    fc.assert(
      fc.property(fc.oneof(fc.array(primitive, { maxLength: 8 }), sortedLeaf), (leaf) => {
        let fast: string | Error;
        let careful: string | Error;
        try { fast = canonicalJson(leaf); } catch (error) { fast = error as Error; }
        try { careful = carefulCanonicalJson(leaf); } catch (error) { careful = error as Error; }
        assert.deepEqual(fast, careful);
        if (typeof careful === 'string') assert.equal(careful, canonicalizeFromNpm(leaf));
      }),
      { numRuns: 2000 },
    );
  });

  test('a toJSON added to Object.prototype or Array.prototype changes nothing', () => {
    const value = { a: 1, b: ['x', 2], c: { d: true } };
    const expected = '{"a":1,"b":["x",2],"c":{"d":true}}';
    for (const prototype of [Object.prototype, Array.prototype]) {
      Object.defineProperty(prototype, 'toJSON', { value: () => 'polluted', configurable: true, writable: true });
      try {
        assert.equal(canonicalJson(value), expected);
      } finally {
        Reflect.deleteProperty(prototype, 'toJSON');
      }
    }
    assert.equal(canonicalJson(value), expected);
  });

  test('a member name with a lone surrogate is refused every time (it is never remembered as serialized)', () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      assert.throws(() => canonicalJson({ a: 1, '\ud800x': 2 }), (error: unknown) => error instanceof CanonicalJsonError && error.kind === 'lone-surrogate' && error.path === '/\ud800x');
    }
    assert.equal(canonicalJson({ '\ud83d\ude00': 1, a: 2 }), '{"a":2,"😀":1}');
  });

  test('short string values, remembered as serialized, come out the same every time; a lone surrogate never does', () => {
    const values = ['string', 'a"b', 'tab\there', '\u0001', 'é€', '😀', '\\u0041', 'x'.repeat(16), 'y'.repeat(17)];
    for (let attempt = 0; attempt < 3; attempt++) {
      for (const value of values) assert.equal(canonicalJson({ v: value }), `{"v":${JSON.stringify(value)}}`);
      assert.throws(() => canonicalJson(['ok', 'x\udc00']), (error: unknown) => error instanceof CanonicalJsonError && error.kind === 'lone-surrogate' && error.path === '/1');
    }
  });

  test('deep nesting (past the fast path depth) still canonicalizes', () => {
    let deep: unknown = { b: 1, a: 2 };
    for (let level = 0; level < 100; level++) deep = [deep];
    assert.equal(canonicalJson(deep), '['.repeat(100) + '{"a":2,"b":1}' + ']'.repeat(100));
  });

  test('is idempotent: canonicalizing the parsed canonical form gives the same text', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = canonicalJson(value);
        assert.equal(canonicalJson(JSON.parse(once)), once);
      }),
      { numRuns: 2000 },
    );
  });

  test('parses back to an equal value', () => {
    fc.assert(
      fc.property(json, (value) => {
        assert.deepEqual(JSON.parse(canonicalJson(value)), JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 1000 },
    );
  });
});
