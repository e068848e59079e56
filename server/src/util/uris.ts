/**
 * File URIs ↔ paths. The live workspace works in paths (it reads files); LSP speaks URIs.
 * Documents with other schemes (untitled:, vscode-vfs:) keep their URI as their "path": they are
 * checked, but stdio servers never start in them and mcp.json files are not looked up.
 */
import { URI } from 'vscode-uri';

export function uriToPath(uri: string): string {
  return uri.startsWith('file:') ? URI.parse(uri).fsPath : uri;
}

export function pathToUri(file: string): string {
  return file.includes(':') && !file.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(file) ? file : URI.file(file).toString();
}
