/**
 * The one function of `cross-spawn` Toolpin uses (the package ships no types): `child_process.spawn`
 * with Windows command resolution (PATHEXT, `.cmd` shims, quoting); elsewhere it is `spawn` itself.
 */
declare module 'cross-spawn' {
  import type { ChildProcess, SpawnOptions } from 'node:child_process';
  function spawn(command: string, args: readonly string[], options: SpawnOptions): ChildProcess;
  export default spawn;
}
