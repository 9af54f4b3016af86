/**
 * Who holds a store's ingestion lease: a process named by its host, its pid and a random part
 * (`<host>:<pid>:<random>`, after an optional `<what>@`). A lease normally lasts until it
 * expires; one held by a process of this host that is gone (killed, crashed) is let go at once,
 * so that a process started again takes over without waiting for it to expire.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** A holder name for this process (`what`: the command, when not a server). */
export function processHolder(what?: string): string {
  return `${what ? `${what}@` : ''}${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

const HOLDER = /^(?:[^@:]+@)?([^:@]+):(\d+):([^:]+)$/;

/**
 * Whether `holder` is a process of this host that is gone: not `mine`, and its pid runs no
 * process, or is this process's own (started again with the same pid, as a container's first
 * process is). A holder of another host, or of a name this does not read, is never gone.
 */
export function holderGone(
  holder: string,
  mine: string,
  isAlive: (pid: number) => boolean = pidAlive,
): boolean {
  if (holder === mine) return false;
  const m = HOLDER.exec(holder);
  if (!m || m[1] !== hostname()) return false;
  const pid = Number(m[2]);
  return pid === process.pid || !isAlive(pid);
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
