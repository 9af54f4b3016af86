import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseSecretsKey } from '../config.ts';

/** The file in DATA_DIR holding the key that encrypts webhook secrets, made on first use. */
export const SECRET_KEY_FILE = 'webhook-secrets.key';

/**
 * Webhook signing secrets at rest: AES-256-GCM under a 32-byte key kept outside the store (the
 * WEBHOOK_SECRETS_KEY setting, else a key file in the data directory), so a dump of the store
 * alone does not give the secrets. Stored form: `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secrets key must be 32 bytes');
    this.key = key;
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const b = (x: Buffer) => x.toString('base64url');
    return `v1.${b(iv)}.${b(cipher.getAuthTag())}.${b(body)}`;
  }

  /** The secret, or null when it was sealed under another key (or is damaged). */
  open(sealed: string): string | null {
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || iv === undefined || tag === undefined || body === undefined) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/**
 * The key from the setting when given, else from `<dataDir>/webhook-secrets.key` (written with
 * a new random key, readable by its owner only, when missing). Several servers on one
 * PostgreSQL must share it: give them the same setting.
 */
export function loadSecretsKey(setting: string | null, dataDir: string): Buffer {
  if (setting) {
    const key = parseSecretsKey(setting);
    if (!key) throw new Error('WEBHOOK_SECRETS_KEY: must be 64 hex digits or 32 bytes in base64');
    return key;
  }
  const path = join(dataDir, SECRET_KEY_FILE);
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    try {
      writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process wrote it first: read theirs.
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
  const key = parseSecretsKey(readFileSync(path, 'utf8'));
  if (!key) throw new Error(`${path}: must hold 64 hex digits`);
  return key;
}

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
