/**
 * Preloaded with `node --require` into a process a benchmark measures: at exit, writes the
 * process's peak resident memory (MB) and exit status as the last line of standard error, as JSON.
 */
process.on('exit', (code) => {
  process.stderr.write(`\n${JSON.stringify({ maxRssMb: process.resourceUsage().maxRSS / 1024, status: code })}\n`);
});
