/**
 * Reading a workspace folder's policy (`.toolpin/policy.jsonc`, core/verify/policy.ts) for the CLI and
 * the language server. A folder without the file has the empty policy; an unreadable or broken
 * file gives problems in the file and a policy made of its well-formed entries only. Results are
 * cached per folder until `invalidate` (the language server's file watcher) says otherwise.
 */
import * as path from 'node:path';
import { kindOfFile } from '../core/documents/kinds/registry';
import { EMPTY_POLICY, parsePolicy, POLICY_FILE, type PolicyAnalysis } from '../core/verify/policy';

export interface PolicyFile extends PolicyAnalysis {
  /** The absolute path of the policy file. */
  readonly path: string;
  /** Its text, when it exists. */
  readonly text: string | undefined;
}

/** The absolute path of a folder's policy file. */
export function policyPathOf(folder: string): string {
  return path.join(folder, ...POLICY_FILE.split('/'));
}

/** True when `file` is a policy file (`…/.toolpin/policy.jsonc`; core/documents/kinds/policy.ts). */
export function isPolicyFile(file: string): boolean {
  return kindOfFile(file)?.role === 'policy';
}

export class PolicyReader {
  private readonly cache = new Map<string, Promise<PolicyFile>>();

  constructor(private readonly readFile: (file: string) => Promise<string | undefined>) {}

  /** The policy of a workspace folder. */
  read(folder: string): Promise<PolicyFile> {
    let found = this.cache.get(folder);
    if (!found) {
      const file = policyPathOf(folder);
      found = this.readFile(file).then(
        (text) => (text === undefined ? { path: file, text, policy: EMPTY_POLICY, problems: [] } : { path: file, text, ...parsePolicy(text, Date.now()) }),
        () => ({ path: file, text: undefined, policy: EMPTY_POLICY, problems: [] }),
      );
      this.cache.set(folder, found);
    }
    return found;
  }

  /** Forgets the policy of one folder (its file changed), or of every folder. */
  invalidate(folder?: string): void {
    if (folder === undefined) this.cache.clear();
    else this.cache.delete(folder);
  }
}
