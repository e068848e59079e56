/**
 * The keys ObjectStack's own connector schema accepts, generated from `@objectstack/spec` 17.1.0
 * (objectstack-ai/objectstack at 5337ef162dbbb5c24125045ee6ef7375fb984966, Apache-2.0):
 * the members of `ConnectorSchema` in `packages/spec/src/integration/connector.zod.ts` and of the
 * `MetadataProtectionFields` it spreads (`packages/spec/src/kernel/metadata-protection.zod.ts`).
 * `DeclarativeConnectorEntrySchema`, which checks the `connectors:` of a stack and so the compiled
 * `objectstack.json`, is `ConnectorSchema` with cross-field rules only: the same keys.
 *
 * Keys declared with `retiredKey(...)` are tombstones: the schema refuses them, so they are not
 * known keys here either (a connector that still carries one gets TP102).
 *
 * Generated, not edited: test/unit/objectstackKeys.test.ts reads the same two schema files (copied
 * byte for byte under test/fixtures/objectstack/spec) and fails, printing the table to paste here,
 * when they disagree.
 */

/** The `@objectstack/spec` version the table was generated from. */
export const OBJECTSTACK_SPEC_VERSION = '17.1.0';

/** Every key of `ConnectorSchema` (and so of `DeclarativeConnectorEntrySchema`), in schema order. */
export const OBJECTSTACK_CONNECTOR_KEYS: readonly string[] = [
  'name',
  'label',
  'type',
  'description',
  'icon',
  'authentication',
  'provider',
  'providerConfig',
  'auth',
  'actions',
  'triggers',
  'syncConfig',
  'fieldMappings',
  'webhooks',
  'retryConfig',
  'connectionTimeoutMs',
  'requestTimeoutMs',
  'status',
  'enabled',
  'errorMapping',
  'health',
  'metadata',
  '_lock',
  '_lockReason',
  '_lockSource',
  '_provenance',
  '_packageId',
  '_packageVersion',
  '_lockDocsUrl',
];

/** Keys the schema declares with `retiredKey(...)`: removed, and refused when present. */
export const OBJECTSTACK_RETIRED_CONNECTOR_KEYS: readonly string[] = ['rateLimitConfig'];
