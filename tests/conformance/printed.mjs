// What an SDK prints while a check runs: every console line is kept (and still printed),
// so a check can fail on any warning or error a client library writes. Shared by
// ts-client.mjs and ts-progress.mjs.
export function capturePrinted() {
  const printed = [];
  for (const level of ["warn", "error", "log", "info", "debug"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      printed.push(`${level}: ${args.map(String).join(" ")}`);
      original(...args);
    };
  }
  return printed;
}
