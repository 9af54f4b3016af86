import { createHash } from 'node:crypto';

/**
 * CSP sources that allow exactly the inline `<script>` (not those loaded with `src`) or `<style>`
 * elements of a page, by the SHA-256 of their text: a page's own code runs, nothing injected
 * into it does.
 */
export function inlineHashes(html: string, tag: 'script' | 'style'): string[] {
  const element = new RegExp(`<${tag}\\b([^>]*)>([\\s\\S]*?)</${tag}>`, 'gi');
  return [...html.matchAll(element)]
    .filter(([, attributes = '']) => !/\bsrc\s*=/i.test(attributes))
    .map(([, , body = '']) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
}
