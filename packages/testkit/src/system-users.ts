import { readFileSync } from 'node:fs';

/** A user account's ids. */
export interface UserIds {
  readonly uid: number;
  readonly gid: number;
}

/** Looks `name` up in `/etc/passwd`; `undefined` when there is no such user. */
export function lookUpUser(name: string): UserIds | undefined {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of passwd.split('\n')) {
    const [userName, , uid, gid] = line.split(':');
    if (userName === name && uid !== undefined && gid !== undefined) {
      return { uid: Number(uid), gid: Number(gid) };
    }
  }
  return undefined;
}

/** Whether this process runs as root. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}
