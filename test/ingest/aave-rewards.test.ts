import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContractFunctionRevertedError, type PublicClient, zeroAddress } from 'viem';
import { readRewards } from '../../src/ingest/chain/aave-reserves.ts';
import { AaveCache, type AavePoolRead, type AaveReserve } from '../../src/ingest/chain/aave-types.ts';
import type { ChainRpc } from '../../src/ingest/chain/rpc.ts';

const POOL = '0x00000000000000000000000000000000000000a0';
const CONTROLLER = '0x00000000000000000000000000000000000000c0';
const A_TOKEN_1 = '0x00000000000000000000000000000000000000a1';
const A_TOKEN_2 = '0x00000000000000000000000000000000000000a2';
const REWARD_1 = '0x00000000000000000000000000000000000000b1';
const REWARD_2 = '0x00000000000000000000000000000000000000b2';
const ORACLE_1 = '0x00000000000000000000000000000000000000d1';
const ORACLE_2 = '0x00000000000000000000000000000000000000d2';

interface Call {
  address: string;
  functionName: string;
  args?: readonly unknown[];
}

/**
 * A RewardsController as a multicall answers it: each aToken's reward list (the first aToken's
 * refused, as a controller that no longer lists it does), each reward's data (its emission per
 * second names the aToken and reward: 1_1 for the first of each), its oracle and the oracle's
 * price (8 decimals).
 */
function fakeRewardsRpc() {
  const batches: Call[][] = [];
  const refusal = (functionName: string) =>
    new ContractFunctionRevertedError({ abi: [], functionName, message: 'not an asset of this controller' });
  const answer = (c: Call) => {
    const arg = (i: number) => String(c.args?.[i]).toLowerCase();
    switch (c.functionName) {
      case 'getRewardsByAsset':
        return arg(0) === A_TOKEN_1
          ? { status: 'failure', error: refusal(c.functionName) }
          : { status: 'success', result: [REWARD_2] };
      case 'getRewardsData': {
        const emission = BigInt(`${arg(0).slice(-1)}${arg(1).slice(-1)}`);
        return { status: 'success', result: [0n, emission, 0n, 2_000_000_000n] };
      }
      case 'getRewardOracle':
        return { status: 'success', result: arg(0) === REWARD_1 ? ORACLE_1 : ORACLE_2 };
      case 'latestAnswer':
        return { status: 'success', result: c.address === ORACLE_1 ? 100_000_000n : 250_000_000n };
      case 'decimals':
        return { status: 'success', result: 8 };
      default:
        return { status: 'failure', error: refusal(c.functionName) };
    }
  };
  const multicall = async ({ contracts }: { contracts: Call[] }) => {
    batches.push(contracts);
    return contracts.map(answer);
  };
  const rpc = {
    chainId: 1,
    client: {} as PublicClient,
    requests: () => batches.length,
    multicallOptions: async () => ({ deployless: true, batchSize: 4096 }),
    multicall,
  } as unknown as ChainRpc;
  return { rpc, batches };
}

const token = (address: string, symbol: string) => ({ address, symbol, name: symbol, decimals: 18 });

function reserve(asset: string, aToken: string): AaveReserve {
  return {
    asset,
    aToken,
    variableDebt: zeroAddress,
    incentives: { supply: CONTROLLER, borrow: null },
    rewards: { supply: [], borrow: [] },
  } as unknown as AaveReserve;
}

test("behavior: a controller refusing one token's list leaves the other tokens' rewards read in step", async () => {
  const { rpc, batches } = fakeRewardsRpc();
  // As a previous pass left it: both aTokens listed one reward each, their oracles and tokens known.
  const cache = new AaveCache();
  cache.rewardLists.set(`${CONTROLLER}:${A_TOKEN_1}`, [REWARD_1]);
  cache.rewardLists.set(`${CONTROLLER}:${A_TOKEN_2}`, [REWARD_2]);
  cache.rewardOracles.set(`${CONTROLLER}:${REWARD_1}`, ORACLE_1);
  cache.rewardOracles.set(`${CONTROLLER}:${REWARD_2}`, ORACLE_2);
  cache.tokens.set(REWARD_1, token(REWARD_1, 'R1'));
  cache.tokens.set(REWARD_2, token(REWARD_2, 'R2'));
  const first = reserve('0x00000000000000000000000000000000000000e1', A_TOKEN_1);
  const second = reserve('0x00000000000000000000000000000000000000e2', A_TOKEN_2);
  const pool = { pool: POOL, reserves: [first, second] } as unknown as AavePoolRead;
  const failures: { id: string; error: string }[] = [];

  await readRewards(
    rpc,
    { blockNumber: 1n, allowFailure: true, deployless: true, batchSize: 4096 },
    [pool],
    cache,
    failures,
  );

  // The second aToken's reward is its own data (emission 2_2), priced by its own oracle.
  assert.deepEqual(second.rewards.supply, [
    { token: token(REWARD_2, 'R2'), emissionPerSecond: 22n, distributionEnd: 2_000_000_000n, oracleUsd: 2.5 },
  ]);
  assert.deepEqual(first.rewards.supply, []);
  assert.equal(failures.length, 1);
  assert.match(failures[0]!.error, /incentives controller 0x0+c0: .*getRewardsByAsset/);
  // Nothing was read as what it is not: every call went to an address, the oracle kept is the
  // controller's answer, and one multicall sufficed (nothing looked changed).
  for (const c of batches.flat())
    assert.match(c.address, /^0x[0-9a-f]{40}$/, `${c.functionName} at ${c.address}`);
  assert.equal(cache.rewardOracles.get(`${CONTROLLER}:${REWARD_1}`), ORACLE_1);
  assert.equal(cache.rewardLists.has(`${CONTROLLER}:${A_TOKEN_1}`), false);
  assert.equal(batches.length, 1);
});
