// Generates src/schema.ts from openapi.json with openapi-typescript. Its first line names the
// document's SHA-256, so a test can tell cheaply whether the types were made from the saved
// document. `--check` writes nothing and exits 1 when src/schema.ts differs from a fresh run.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const documentUrl = new URL('../openapi.json', import.meta.url);
const schemaUrl = new URL('../src/schema.ts', import.meta.url);

function schemaHeader(documentText: string): string {
  const sha256 = createHash('sha256').update(documentText).digest('hex');
  return `// Generated from sdk/openapi.json (sha256 ${sha256}) by openapi-typescript; do not edit: npm run generate in sdk/.\n`;
}

const documentText = readFileSync(documentUrl, 'utf8');
const ast = await openapiTS(JSON.parse(documentText), { silent: true });
const text = schemaHeader(documentText) + astToString(ast);

if (process.argv.includes('--check')) {
  if (readFileSync(schemaUrl, 'utf8') !== text) {
    process.stderr.write(
      'sdk/src/schema.ts is not what openapi.json generates: run npm run generate in sdk/\n',
    );
    process.exit(1);
  }
} else {
  writeFileSync(schemaUrl, text);
  process.stdout.write(`wrote ${schemaUrl.pathname}\n`);
}
