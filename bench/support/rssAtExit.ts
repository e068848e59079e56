/**
 * Preloaded with `node --require` into a process a benchmark measures: at exit, writes the
 * process's peak resident memory (MB), its CPU time (user and system, ms) and exit status as the
 * last line of standard error, as JSON. On a loaded machine the CPU time is the steadier figure.
 */
process.on('exit', (code) => {
  const usage = process.resourceUsage();
  process.stderr.write(`\n${JSON.stringify({ maxRssMb: usage.maxRSS / 1024, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, status: code })}\n`);
});
