// Declarations of the modules the example's sources import, as far as the example uses them, so
// the example opens without TypeScript errors with nothing installed. Toolpin reads the calls;
// it never runs them.

declare module '@loom/plugin-mcp' {
  export interface McpInvokeInput {
    readonly toolName: string;
    readonly server?: string;
    readonly expectedSchemaHash?: string;
    readonly arguments?: Readonly<Record<string, unknown>>;
  }
  /** A blueprint step that calls an MCP tool: `id` is the step id (optionally `#n`). */
  export function mcpInvoke$(id: string, input: McpInvokeInput): unknown;
}

declare module '@objectstack/spec/integration' {
  export interface ConnectorDefinition {
    readonly name: string;
    readonly label?: string;
    readonly provider: string;
    readonly providerConfig?: Readonly<Record<string, unknown>>;
    readonly auth?: Readonly<Record<string, unknown>>;
  }
  export function defineConnector<T extends ConnectorDefinition>(definition: T): T;
}
