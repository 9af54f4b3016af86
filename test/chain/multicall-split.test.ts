/**
 * On a local chain: a multicall batch that one call brings down whole (a contract that burns all
 * the gas it is given, before many others) is split until that call stands alone, and the call is
 * remembered: the next multicall naming it sends it alone beside the rest, not a walk of halves.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { erc20Abi, http } from 'viem';
import { createChainRpc, DEPLOYLESS_BATCH_BYTES } from '../../src/ingest/chain/rpc.ts';
import { type Anvil, compileContracts, deploy, startAnvil } from './anvil.ts';

let anvil: Anvil;
before(async () => {
  anvil = await startAnvil();
});
after(async () => {
  await anvil?.stop();
});

test('behavior: a batch-reverting call is split out once, then sent alone; the other calls are answered', async () => {
  const art = compileContracts();
  const c = anvil.client(0);
  const burner = await deploy(c, art.TestGasBurner!);
  const token = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  let ethCalls = 0;
  const rpc = createChainRpc(anvil.chainId, anvil.url, {
    transport: http(anvil.url, {
      batch: { batchSize: 100, wait: 0 },
      onFetchRequest: async (request) => {
        const body = await request.clone().json();
        for (const r of Array.isArray(body) ? body : [body]) if (r.method === 'eth_call') ethCalls++;
      },
    }),
  });
  const holders = Array.from(
    { length: 150 },
    (_, i) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}` as const,
  );
  const contracts = [
    { address: burner, abi: art.TestGasBurner!.abi, functionName: 'price' },
    ...holders.map((h) => ({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [h] }) as const),
  ];
  // One batch (deployless, as on anvil), so that the burner brings all of it down.
  const ask = () =>
    rpc.multicall({
      contracts: contracts as never,
      allowFailure: true,
      deployless: true,
      batchSize: 64 * DEPLOYLESS_BATCH_BYTES,
    }) as Promise<{ status: string; result?: unknown }[]>;
  const first = await ask();
  const splitCalls = ethCalls;
  assert.equal(first[0]!.status, 'failure');
  assert.deepEqual(
    first.slice(1).map((r) => [r.status, r.result]),
    holders.map(() => ['success', 0n]),
  );
  assert.ok(splitCalls > 2, `the first walk split the batch (${splitCalls} calls)`);
  // and every time after: it is not forgotten while it fails
  for (const _ of [1, 2, 3]) {
    ethCalls = 0;
    const again = await ask();
    assert.equal(ethCalls, 2, 'the burner alone, and the rest');
    assert.deepEqual(
      again.map((r) => r.status),
      first.map((r) => r.status),
    );
  }
});

test('behavior: requests made together never exceed the node’s request size (anvil refuses bodies over 2 MiB)', async () => {
  // Sixty 40 KB calls sent at once: 2.4 MB in one batch, which anvil refuses whole, as plain
  // batching sends them; within the provider limits they go in batches of at most 1 MB.
  const data = `0x${'ab'.repeat(40_000)}` as const;
  const to = `0x${'11'.repeat(20)}` as const;
  const plain = createChainRpc(anvil.chainId, anvil.url, {
    transport: http(anvil.url, { batch: { batchSize: 100, wait: 0 }, retryCount: 0 }),
  });
  await assert.rejects(Promise.all(Array.from({ length: 60 }, () => plain.client.call({ to, data }))));
  const rpc = createChainRpc(anvil.chainId, anvil.url);
  const answers = await Promise.all(Array.from({ length: 60 }, () => rpc.client.call({ to, data })));
  assert.equal(answers.length, 60);
  assert.ok(rpc.requests() >= 3, `${rpc.requests()} HTTP requests`);
});
