import type { Settings } from '../config.ts';

/** What a person at a terminal wants once the server is up: where to go, in words. */
export function readyText(
  settings: Pick<Settings, 'host' | 'port'>,
  dataset: { kind: string; marketCount: number; positionCount: number; synced?: boolean },
  ms: number,
): string {
  const host = ['0.0.0.0', '::', ''].includes(settings.host) ? 'localhost' : settings.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`;
  const data =
    dataset.synced === false
      ? 'no live data yet: no source of the sources file has been read (health below says why); passes go on'
      : dataset.kind === 'live'
        ? `live data of the sources file (${dataset.marketCount.toLocaleString('en-US')} markets)`
        : `sandbox data (${dataset.marketCount.toLocaleString('en-US')} markets, ${dataset.positionCount.toLocaleString('en-US')} positions; labelled snapshot)`;
  return [
    `lrds: ready in ${(ms / 1000).toFixed(1)} s, serving ${data}`,
    `  API        ${base}/api/v1   (make a key: npx lrds keys create --tier pro)`,
    `  docs       ${base}/docs`,
    `  dashboard  ${base}/dashboard`,
    `  health     ${base}/api/v1/health`,
  ].join('\n');
}
