// Validates glTF files (.glb, or .gltf with their external buffers) with the Khronos
// glTF-Validator (npm package `gltf-validator`) and exits with status 1 when any has an error or
// a warning. Usage: node validate-exports.js FILE...
const validator = require('gltf-validator');
const fs = require('fs');
const path = require('path');
(async () => {
  let failed = false;
  for (const f of process.argv.slice(2)) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(f)), {
      maxIssues: 100,
      uri: path.basename(f),
      externalResourceFunction: (uri) =>
        new Promise((resolve, reject) => {
          fs.readFile(path.join(path.dirname(f), decodeURIComponent(uri)), (err, data) =>
            err ? reject(err.toString()) : resolve(new Uint8Array(data)));
        }),
    });
    const issues = report.issues;
    console.log(`${f}: ${issues.numErrors} error(s), ${issues.numWarnings} warning(s)`);
    for (const m of issues.messages.filter((m) => m.severity <= 1)) {
      console.log(`  ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
    }
    failed = failed || issues.numErrors > 0 || issues.numWarnings > 0;
  }
  process.exit(failed ? 1 : 0);
})();
