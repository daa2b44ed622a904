import {
  createLockProvider,
  type IElection,
  type Leadership,
  LockTimeoutError,
  redactUrl,
} from 'lockkit';
import { exitCodes } from '../exit-codes.js';
import type { ElectCommand } from '../invocation.js';
import { keepAlive } from '../keep-alive.js';
import type { Output } from '../output.js';
import { onTerminationSignals, signalExitCode } from '../signals.js';
import { type ChildOutcome, notStarted, SupervisedChild } from '../supervised-child.js';

/**
 * `lockkit elect`: campaigns in the election, runs the command while leading (with the epoch
 * in its environment), stops it when leadership is lost (SIGTERM, then SIGKILL after the
 * grace) and campaigns again (`--once`: exits 76 instead). When the command ends by itself,
 * lockkit resigns and exits with its status. Termination signals are passed on to a running
 * command (lockkit resigns once it has exited) and end a campaign (128 + n).
 */
export async function electCommand(elect: ElectCommand, output: Output): Promise<number> {
  const provider = await createLockProvider(elect.url);
  const election = provider.createElection(
    elect.name,
    elect.owner === undefined ? undefined : { owner: elect.owner },
  );
  const stop = new AbortController();
  let received: NodeJS.Signals | undefined;
  let child: SupervisedChild | undefined;
  const stopListening = onTerminationSignals((signal) => {
    received ??= signal;
    if (child) {
      if (elect.verbose) output.say(`passing ${signal} on to the command`);
      child.signal(signal);
    }
    stop.abort();
  });
  // A campaign may rest on unref'd timers and watchers only: keep the process alive.
  const stopKeepingAlive = keepAlive();
  const say = (line: string): void => {
    if (elect.verbose) output.say(line);
  };
  try {
    for (let first = true; ; first = false) {
      say(
        `campaigning in election ${JSON.stringify(elect.name)} on ${redactUrl(elect.url)} (${provider.backend}) as ${election.owner}`,
      );
      let leadership: Leadership;
      try {
        leadership = await campaign(election, stop.signal, first);
      } catch (error) {
        if (received === undefined) throw error;
        output.say(`received ${received} while campaigning; the command did not run`);
        return signalExitCode(received);
      }
      say(`elected with epoch ${leadership.epoch}`);
      const term = await leadTerm(elect, leadership, provider.backend, output, (started) => {
        child = started;
      });
      child = undefined;
      await leadership.resign();
      say(`resigned (epoch ${leadership.epoch})`);
      if (term.outcome.kind === 'not-started') return notStarted(term.outcome, elect.argv, output);
      if (!term.lost || received !== undefined) return statusOf(term.outcome);
      if (elect.once) return exitCodes.lost;
    }
  } finally {
    stopKeepingAlive();
    await provider.close();
    stopListening();
  }
}

/**
 * Campaigns until elected. The first campaign tries once before it waits, so that a server
 * that cannot be reached at start fails fast (`BackendUnavailableError`, exit 69) instead of
 * being waited out like a later outage.
 */
async function campaign(
  election: IElection,
  signal: AbortSignal,
  first: boolean,
): Promise<Leadership> {
  if (first) {
    try {
      return await election.campaign({ timeout: 0, signal });
    } catch (error) {
      if (!LockTimeoutError.isInstance(error)) throw error;
    }
  }
  return election.campaign({ signal });
}

/** One term: runs the command until it exits; stops it if leadership is lost meanwhile. */
async function leadTerm(
  elect: ElectCommand,
  leadership: Leadership,
  backend: string,
  output: Output,
  running: (child: SupervisedChild) => void,
): Promise<{ readonly outcome: ChildOutcome; readonly lost: boolean }> {
  if (leadership.signal.aborted) {
    output.say('leadership was lost right after the election; the command did not run');
    return { outcome: { kind: 'exited', code: exitCodes.lost }, lost: true };
  }
  const started = new SupervisedChild(elect.argv, {
    LOCKKIT_EPOCH: String(leadership.epoch),
    LOCKKIT_FENCING_TOKEN: String(leadership.epoch),
    LOCKKIT_ELECTION: elect.name,
    LOCKKIT_OWNER: leadership.owner,
    LOCKKIT_BACKEND: backend,
  });
  running(started);
  let lost = false;
  const onLost = (): void => {
    lost = true;
    const reason = leadership.signal.reason;
    output.say(
      `${reason instanceof Error ? reason.message : 'leadership lost'}. Stopping the command: SIGTERM now, SIGKILL in ${elect.killAfterMs} ms if it is still running.`,
    );
    started.terminate(elect.killAfterMs);
  };
  leadership.signal.addEventListener('abort', onLost, { once: true });
  const outcome = await started.outcome;
  leadership.signal.removeEventListener('abort', onLost);
  return { outcome, lost };
}

/** lockkit's exit status for how the command ended. */
function statusOf(outcome: ChildOutcome): number {
  if (outcome.kind === 'signalled') return signalExitCode(outcome.signal);
  return outcome.kind === 'exited' ? outcome.code : exitCodes.cannotExecute;
}
