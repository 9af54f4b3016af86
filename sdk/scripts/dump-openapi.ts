// Writes the OpenAPI document the API serves (built in-process from this repository) to
// sdk/openapi.json, the source of src/schema.ts. Run by `npm run generate` in sdk/.
import { writeFileSync } from 'node:fs';
import { createTestApp } from '../../test/helpers.ts';

const app = await createTestApp();
try {
  const res = await app.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
  const path = new URL('../openapi.json', import.meta.url);
  writeFileSync(path, `${JSON.stringify(res.json(), null, 2)}\n`);
  process.stdout.write(`wrote ${path.pathname}\n`);
} finally {
  await app.close();
}
