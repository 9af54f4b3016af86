/**
 * Who holds a store's ingestion lease: a process named by its host and PID namespace, its pid
 * and a random part (`<host>#<namespace>:<pid>:<random>`, after an optional `<what>@`). A lease
 * normally lasts until it expires; one held by a process that is gone (killed, crashed) and that
 * this process can tell is gone (same host, same PID namespace) is let go at once, so that a
 * process started again takes over without waiting for it to expire.
 */
import { randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** This process's PID namespace (Linux's `/proc/self/ns/pid` inode); '' where it cannot be read. */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
  } catch {
    return '';
  }
}

const NAMESPACE = pidNamespace();
const HERE = `${hostname()}#${NAMESPACE}`;
/** The holder names this process made (two services in one process share its pid). */
const mine = new Set<string>();

/** A holder name for this process (`what`: the command, when not a server). */
export function processHolder(what?: string): string {
  const holder = `${what ? `${what}@` : ''}${HERE}:${process.pid}:${randomUUID().slice(0, 8)}`;
  mine.add(holder);
  return holder;
}

const HOLDER = /^(?:[^@:]+@)?([^:@]+):(\d+):([^:]+)$/;

/**
 * Whether `holder` is a process that is gone, as far as this process can tell: one of its host
 * and PID namespace (a container started again has another: its holder is waited for) whose pid
 * runs no process, or is this process's own pid under a name this process did not make (a
 * process started again with the same pid, as a container's first process is). A holder of
 * another host or namespace, of a name this does not read, or where the namespace cannot be read,
 * is never gone.
 */
export function holderGone(holder: string): boolean {
  if (mine.has(holder) || NAMESPACE === '') return false;
  const m = HOLDER.exec(holder);
  if (!m || m[1] !== HERE) return false;
  const pid = Number(m[2]);
  return pid === process.pid || !pidAlive(pid);
}

/** Whether a process runs with this pid (one of another user's counts). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
