import type { Area } from '../types.ts';
import { registerHealth } from './health.ts';
import { registerRoot } from './root.ts';

/** Service: where things are, and health. No key needed. */
export const service: Area = {
  scope: 'public',
  tag: {
    name: 'Service',
    description: 'Health and the API description. No key needed.',
  },
  register(app, deps) {
    registerRoot(app);
    registerHealth(app, deps);
  },
};
