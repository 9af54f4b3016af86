import type { Area } from '../types.ts';
import { registerTokenDetail } from './detail.ts';
import { registerTokensList } from './list.ts';
import { TokenDetailSchema, TokenSchema } from './schemas.ts';

/** Tokens: list and one token with its feeds and markets (category core). */
export const tokens: Area = {
  scope: 'data',
  tag: {
    name: 'Tokens',
    description: 'Tokens, their USD prices and the markets holding them (core category).',
  },
  schemas: { Token: TokenSchema, TokenDetail: TokenDetailSchema },
  register(app, deps) {
    registerTokensList(app, deps);
    registerTokenDetail(app, deps);
  },
};
