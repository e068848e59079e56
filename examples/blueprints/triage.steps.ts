// Blueprint steps written in code (docs/formats.md "Source files"): each mcpInvoke$ call is a
// step with a schema pin, read as the steps of a *.blueprint.json file are.
import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';

interface InboundEvent {
  readonly subject: string;
}

/** Scores an issue on the notes server: its input schema is what it was when pinned. */
export const score = invoke('score#1', {
  toolName: 'add_numbers',
  server: 'notes_tools',
  expectedSchemaHash: 'fnv1a64:0771c7b7e25fe04c',
  arguments: { a: 1, b: 2 },
});

/** Normalizes the title: the tool now requires "locale", so the pin has drifted. */
export const normalizeTitle = (event: InboundEvent) =>
  invoke(`normalize-title#2`, {
    toolName: "reverse_text",
    server: 'notes_tools',
    expectedSchemaHash: 'fnv1a64:888afff69800ff63',
    // Computed at run time: Toolpin reports it and does not guess its value.
    arguments: { text: event.subject },
  });
