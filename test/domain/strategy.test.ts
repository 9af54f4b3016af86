import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { RISK_LEVELS } from '../../src/domain/enums.ts';
import { assetFamily, classifyStrategy, STRATEGY_TYPES } from '../../src/domain/strategy.ts';

const FAMILIES: Record<string, readonly string[]> = {
  stable: [
    'USDC',
    'USDT',
    'DAI',
    'USDS',
    'USDe',
    'GHO',
    'FRAX',
    'crvUSD',
    'PYUSD',
    'USD0',
    'EURC',
    'USDC.e',
    'USDbC',
    'USDT0',
    'LUSD',
    'frxUSD',
    'sUSDS',
    'sDAI',
    'sUSDe',
    'sfrxUSD',
    'scrvUSD',
    'syrupUSDC',
    'USD0++',
    'WXDAI',
  ],
  eth: [
    'WETH',
    'ETH',
    'wstETH',
    'stETH',
    'rETH',
    'cbETH',
    'weETH',
    'ezETH',
    'rsETH',
    'osETH',
    'ETHx',
    'sfrxETH',
    'mETH',
    'WETH.e',
  ],
  btc: ['WBTC', 'cbBTC', 'tBTC', 'LBTC', 'eBTC', 'BTC.b', 'BTCB', 'SolvBTC', 'BTC'],
  pt: ['PT-sUSDE-27MAR2025', 'PT-weETH-26DEC2024', 'pt-lbtc-27mar2025', 'PT-USDe-31JUL2025'],
  other: ['PEPE', 'LINK', 'UNI', 'ETHFI', 'AAVE', 'MORPHO', 'ENA', '', '   '],
};

/** [collateral, loan, expected type] */
const KNOWN_PAIRS: readonly (readonly [string, string, string])[] = [
  ['USDC', 'USDT', 'stablecoin-lending'],
  ['USDe', 'USDC', 'stablecoin-lending'],
  ['GHO', 'USDC', 'stablecoin-lending'],
  ['USDC.e', 'DAI', 'stablecoin-lending'],
  ['EURC', 'USDC', 'stablecoin-lending'],
  ['crvUSD', 'PYUSD', 'stablecoin-lending'],
  ['USDC', 'sDAI', 'stablecoin-lending'],
  ['sUSDe', 'USDC', 'yield-bearing-stable'],
  ['sUSDS', 'USDT', 'yield-bearing-stable'],
  ['sDAI', 'USDC', 'yield-bearing-stable'],
  ['USD0++', 'USD0', 'yield-bearing-stable'],
  ['wstETH', 'WETH', 'eth-lst-loop'],
  ['weETH', 'WETH', 'eth-lst-loop'],
  ['ezETH', 'WETH', 'eth-lst-loop'],
  ['rsETH', 'ETH', 'eth-lst-loop'],
  ['osETH', 'WETH', 'eth-lst-loop'],
  ['ETHx', 'WETH', 'eth-lst-loop'],
  ['cbETH', 'WETH', 'eth-lst-loop'],
  ['stETH', 'ETH', 'eth-lst-loop'],
  ['WETH', 'wstETH', 'eth-lst-loop'],
  ['cbBTC', 'WBTC', 'btc-loop'],
  ['LBTC', 'WBTC', 'btc-loop'],
  ['eBTC', 'cbBTC', 'btc-loop'],
  ['PT-sUSDE-27MAR2025', 'DAI', 'pendle-pt'],
  ['PT-weETH-26DEC2024', 'WETH', 'pendle-pt'],
  ['PT-LBTC-27MAR2025', 'WBTC', 'pendle-pt'],
  ['WETH', 'USDC', 'eth-collateral-stable-borrow'],
  ['wstETH', 'USDT', 'eth-collateral-stable-borrow'],
  ['weETH', 'DAI', 'eth-collateral-stable-borrow'],
  ['WBTC', 'USDC', 'btc-collateral-stable-borrow'],
  ['cbBTC', 'USDC', 'btc-collateral-stable-borrow'],
  ['tBTC', 'USDT', 'btc-collateral-stable-borrow'],
  ['BTC.b', 'USDC', 'btc-collateral-stable-borrow'],
  ['PEPE', 'USDC', 'volatile-collateral'],
  ['LINK', 'USDT', 'volatile-collateral'],
  ['ETHFI', 'USDC', 'volatile-collateral'],
  ['USDC', 'WETH', 'volatile-pair'],
  ['WETH', 'WBTC', 'volatile-pair'],
  ['PEPE', 'WETH', 'volatile-pair'],
  ['', '', 'volatile-pair'],
];

const RISK: Record<string, string> = {
  'stablecoin-lending': 'low',
  'yield-bearing-stable': 'low',
  'eth-lst-loop': 'medium',
  'btc-loop': 'medium',
  'pendle-pt': 'medium',
  'eth-collateral-stable-borrow': 'medium',
  'btc-collateral-stable-borrow': 'medium',
  'volatile-collateral': 'high',
  'volatile-pair': 'high',
};

const knownSymbol = fc.constantFrom(...Object.values(FAMILIES).flat());
/** Known symbols mixed with arbitrary Unicode strings. */
const anySymbol = fc.oneof(fc.string({ unit: 'grapheme' }), knownSymbol);
/** A known symbol with the case of each letter picked at random. */
const recasedSymbol = knownSymbol.chain((symbol) =>
  fc
    .array(fc.boolean(), { minLength: symbol.length, maxLength: symbol.length })
    .map((upper) => [...symbol].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join('')),
);

describe('assetFamily', () => {
  test('default: recognises real symbols by family', () => {
    for (const [family, symbols] of Object.entries(FAMILIES)) {
      for (const symbol of symbols) assert.equal(assetFamily(symbol), family, symbol);
    }
  });

  test('behavior: case-insensitive', () => {
    fc.assert(
      fc.property(recasedSymbol, (symbol) => assetFamily(symbol) === assetFamily(symbol.toLowerCase())),
    );
  });

  test('behavior: a PT- prefix wins over the underlying family', () => {
    fc.assert(fc.property(fc.string(), (rest) => assetFamily(`PT-${rest}`) === 'pt'));
  });
});

describe('classifyStrategy', () => {
  test('default: known pairs', () => {
    for (const [collateral, loan, type] of KNOWN_PAIRS) {
      assert.equal(classifyStrategy(collateral, loan).type, type, `${collateral}/${loan}`);
    }
  });

  test('default: full info of a stablecoin market', () => {
    const info = classifyStrategy('USDC', 'USDT');
    assert.equal(info.type, 'stablecoin-lending');
    assert.equal(info.label, 'Stablecoin lending');
    assert.equal(info.riskLevel, 'low');
    assert.equal(info.color, '#22c55e');
    assert.equal(info.icon, 'shield');
    assert.ok(info.description.length > 20);
  });

  test('default: risk level of each type', () => {
    for (const [collateral, loan, type] of KNOWN_PAIRS) {
      assert.equal(classifyStrategy(collateral, loan).riskLevel, RISK[type], `${collateral}/${loan}`);
    }
  });

  test('behavior: every type is reachable from a known pair', () => {
    const reached = new Set(KNOWN_PAIRS.map(([collateral, loan]) => classifyStrategy(collateral, loan).type));
    assert.deepEqual([...reached].sort(), [...STRATEGY_TYPES].sort());
  });

  test('behavior: any pair of strings gets a listed type and a complete, valid info', () => {
    fc.assert(
      fc.property(anySymbol, anySymbol, (collateral, loan) => {
        const info = classifyStrategy(collateral, loan);
        assert.ok((STRATEGY_TYPES as readonly string[]).includes(info.type), info.type);
        assert.ok((RISK_LEVELS as readonly string[]).includes(info.riskLevel), info.riskLevel);
        assert.match(info.color, /^#[0-9a-f]{6}$/);
        assert.match(info.icon, /^[a-z][a-z-]*$/);
        assert.ok(info.label.length > 0 && info.label.length <= 32);
        assert.ok(info.description.endsWith('.'));
      }),
    );
  });

  test('behavior: the same type always carries the same info', () => {
    fc.assert(
      fc.property(recasedSymbol, recasedSymbol, recasedSymbol, recasedSymbol, (c1, l1, c2, l2) => {
        const a = classifyStrategy(c1, l1);
        const b = classifyStrategy(c2, l2);
        if (a.type === b.type) assert.deepEqual(a, b);
      }),
    );
  });

  test('behavior: case-insensitive', () => {
    fc.assert(
      fc.property(recasedSymbol, recasedSymbol, (collateral, loan) => {
        assert.deepEqual(
          classifyStrategy(collateral, loan),
          classifyStrategy(collateral.toLowerCase(), loan.toLowerCase()),
        );
      }),
    );
  });

  test('behavior: PT collateral is pendle-pt whatever the loan', () => {
    fc.assert(
      fc.property(fc.string(), anySymbol, (rest, loan) => {
        return classifyStrategy(`PT-${rest}`, loan).type === 'pendle-pt';
      }),
    );
  });

  test('behavior: returns a fresh object each call', () => {
    const first = classifyStrategy('WETH', 'USDC');
    first.riskLevel = 'low';
    first.label = 'changed';
    assert.equal(classifyStrategy('WETH', 'USDC').riskLevel, 'medium');
    assert.notEqual(classifyStrategy('WETH', 'USDC').label, 'changed');
  });

  test('behavior: STRATEGY_TYPES has no duplicates', () => {
    assert.equal(new Set(STRATEGY_TYPES).size, STRATEGY_TYPES.length);
  });
});
