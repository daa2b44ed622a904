import { request } from 'node:http';

/**
 * One request to etcd's JSON gateway (`/health`, or a `/v3/…` call with a JSON body) on its
 * client port. Rejects on a transport error, a status other than 200, or after `timeoutMs`.
 */
export function etcdGateway<Reply>(
  host: string,
  port: number,
  path: string,
  body: object | undefined,
  timeoutMs: number,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = request(
      {
        host,
        port,
        path,
        method: payload === undefined ? 'GET' : 'POST',
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
        timeout: timeoutMs,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200) {
            reject(new Error(`etcd ${path} answered ${response.statusCode}: ${text.trim()}`));
            return;
          }
          try {
            resolve(JSON.parse(text) as Reply);
          } catch {
            reject(new Error(`etcd ${path} answered with something that is not JSON: ${text}`));
          }
        });
      },
    );
    call.on('timeout', () => call.destroy(new Error(`etcd ${path}: no answer in ${timeoutMs} ms`)));
    call.on('error', reject);
    call.end(payload);
  });
}

/** A member as `/v3/cluster/member/list` lists it. */
interface MemberInfo {
  readonly name?: string;
  readonly clientURLs?: readonly string[];
}

/** Rejects unless the member on `port` is healthy (the cluster has a leader) and is `name`. */
export async function checkEtcdMember(
  host: string,
  port: number,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const health = await etcdGateway<{ health?: string }>(
    host,
    port,
    '/health',
    undefined,
    timeoutMs,
  );
  if (health.health !== 'true') throw new Error(`/health answered ${JSON.stringify(health)}`);
  const { members = [] } = await etcdGateway<{ members?: MemberInfo[] }>(
    host,
    port,
    '/v3/cluster/member/list',
    {},
    timeoutMs,
  );
  const own = members.find((member) => member.name === name);
  const served = own?.clientURLs?.some((url) => url.endsWith(`:${port}`)) ?? false;
  if (!served) throw new Error(`port ${port} is served by another etcd (no member ${name} there)`);
}

/**
 * Revokes every lease on the cluster (each client's session), deleting every key attached to
 * one; returns how many leases there were.
 */
export async function revokeAllLeases(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<number> {
  const { leases = [] } = await etcdGateway<{ leases?: { ID: string }[] }>(
    host,
    port,
    '/v3/lease/leases',
    {},
    timeoutMs,
  );
  await Promise.all(
    leases.map((lease) =>
      etcdGateway(host, port, '/v3/lease/revoke', { ID: lease.ID }, timeoutMs).catch(
        (error: unknown) => {
          // Expired meanwhile: nothing left to revoke.
          if (!/lease not found/.test(String(error))) throw error;
        },
      ),
    ),
  );
  return leases.length;
}

/** The answering member's id and its cluster's leader id, from `/v3/maintenance/status`. */
export async function etcdStatus(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<{ memberId: string; leader: string }> {
  const status = await etcdGateway<{ leader: string; header: { member_id: string } }>(
    host,
    port,
    '/v3/maintenance/status',
    {},
    timeoutMs,
  );
  return { memberId: status.header.member_id, leader: status.leader };
}
