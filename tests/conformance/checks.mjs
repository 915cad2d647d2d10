// Sums up one scenario's results: reads every checks.json the suite wrote under a
// results folder (argv[2]) and prints "PASSED FAILED NOT_APPLICABLE" on the first line,
// then one line per check that did not pass.
//
// A failed check counts as not applicable only when it is listed in
// not-applicable.txt (beside this file) AND the suite itself marked it untestable
// (`details.untestable`), or failed with the error text the line names: it needs one of
// the suite's own fixtures (a test_* tool or prompt), which BesluitBron does not have. A
// listed check that fails for any other reason is a failure.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Each line: a check id, then optionally `when "<text>"`: the check is not applicable
// only when its error message contains that text (BesluitBron's own answer to a request
// about a fixture it does not have), instead of when the suite marks it untestable.
const listed = new Map(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), "not-applicable.txt"), "utf8")
    .split("\n")
    .map((line) => line.split("#")[0].trim())
    .filter(Boolean)
    .map((line) => {
      const m = line.match(/^(\S+)\s+when\s+"(.+)"$/);
      return m ? [m[1], m[2]] : [line, null];
    }),
);
const notApplicable = (check) => {
  if (!listed.has(check.id)) return false;
  const when = listed.get(check.id);
  return when === null ? check.details?.untestable === true : (check.errorMessage ?? "").includes(when);
};
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name === "checks.json") files.push(path);
  }
};
walk(process.argv[2]);
let passed = 0;
let failed = 0;
let skipped = 0;
const lines = [];
for (const file of files) {
  for (const check of JSON.parse(readFileSync(file, "utf8"))) {
    if (check.status === "SUCCESS") {
      passed++;
    } else if (check.status === "FAILURE") {
      const na = notApplicable(check);
      if (na) skipped++;
      else failed++;
      const details = check.details ? ` ${JSON.stringify(check.details).slice(0, 400)}` : "";
      lines.push(`  ${na ? "n/a " : "FAIL"} ${check.id}: ${check.errorMessage ?? check.description ?? ""}${na ? "" : details}`);
    }
  }
}
console.log(passed, failed, skipped);
for (const line of lines) console.log(line);
