import { describe, expect, it } from 'vitest';
import type {
  AskOptions,
  DeploymentAnswer,
  DeploymentExchange,
  GatheredAnswers,
  Responder,
} from '../../../src/backend/deployment-exchange.js';
import { readStreams, streamsAcrossDeployment } from '../../../src/streaming/deployment-streams.js';
import type { OpenStream, OpenStreamDirectory } from '../../../src/streaming/open-streams.js';

/**
 * D49's list and close over an exchange, without NATS: this process's own streams first, the
 * answers of the others read back field by field, a close tried here before anyone is asked.
 * (The exchange itself, on real NATS, is test/contract/jetstream-deployment-exchange.test.ts.)
 */

function stream(id: string): OpenStream {
  return {
    id,
    route: 'replay',
    method: 'GET',
    event_type: 'mars',
    filter: { class: 'od', step: 7 },
    topic_pattern: 'mars.od.*',
    user: null,
    client_address: '10.0.0.1',
    opened_at: '2026-12-05T21:00:00.000Z',
    phase: 'replaying',
    last_sequence: null,
    delivered: 0,
    buffered_bytes: 12,
    lag_ms: 5,
  };
}

/** The other processes' answers, given by the test; records what was asked. */
class ScriptedExchange implements DeploymentExchange {
  readonly process = 'here:1';
  readonly responders = new Map<string, Responder>();
  readonly asked: { question: string; body: string }[] = [];
  constructor(
    private readonly answers: (
      question: string,
      body: string,
    ) => { answers: DeploymentAnswer[]; notAnswering?: string[]; unreachable?: boolean },
  ) {}

  answer(question: string, responder: Responder): void {
    this.responders.set(question, responder);
  }

  ask(question: string, body: string, options: AskOptions = {}): Promise<GatheredAnswers> {
    this.asked.push({ question, body });
    const scripted = this.answers(question, body);
    const settledAt = scripted.answers.findIndex((answer) => options.settles?.(answer) === true);
    return Promise.resolve({
      answers: settledAt < 0 ? scripted.answers : scripted.answers.slice(0, settledAt + 1),
      notAnswering: scripted.notAnswering ?? [],
      unreachable: scripted.unreachable ?? false,
    });
  }
}

function directory(ids: string[]): OpenStreamDirectory & { closed: string[] } {
  const open = new Set(ids);
  const closed: string[] = [];
  return {
    closed,
    list: () => [...open].map(stream),
    close: (id, closedBy) => {
      if (!open.delete(id)) return false;
      closed.push(`${id} by ${closedBy}`);
      return true;
    },
  };
}

describe('streamsAcrossDeployment', () => {
  it("lists this process's streams first, then each answer's, and counts an unreadable answer as none", async () => {
    const exchange = new ScriptedExchange(() => ({
      answers: [
        { process: 'b:2', body: JSON.stringify({ streams: [stream('b1'), { ...stream('broken'), phase: 'sleeping' }, stream('b2')] }) },
        { process: 'c:3', body: 'not json' },
        { process: 'd:4', body: JSON.stringify({ streams: 'none' }) },
      ],
      notAnswering: ['e:5'],
    }));
    const deployment = streamsAcrossDeployment(directory(['a1']), exchange);
    const listed = await deployment.list();
    expect(listed.answered).toEqual([
      { process: 'here:1', streams: [stream('a1')] },
      { process: 'b:2', streams: [stream('b1'), stream('b2')] },
    ]);
    expect(listed.notAnswering).toEqual(['e:5', 'c:3', 'd:4']);
    expect(listed.clusterUnreachable).toBe(false);
    expect(Object.keys(listed.answered[1]!.streams[0]!)).toEqual(Object.keys(stream('x')));
  });

  it('answers the others with its own streams, and closes for them only what it holds', () => {
    const own = directory(['a1']);
    const exchange = new ScriptedExchange(() => ({ answers: [] }));
    streamsAcrossDeployment(own, exchange);
    expect(readStreams(exchange.responders.get('streams.list')!('{}')!)).toEqual([stream('a1')]);
    const close = exchange.responders.get('streams.close')!;
    expect(close(JSON.stringify({ id: 'zz', closed_by: null }))).toBe('{"closed":false}');
    expect(close(JSON.stringify({ id: 'a1', closed_by: 'ops' }))).toBe('{"closed":true}');
    expect(close(JSON.stringify({ id: 7 }))).toBeUndefined();
    expect(close('{')).toBeUndefined();
    expect(own.closed).toEqual(['a1 by ops']);
  });

  it('closes a stream it holds without asking, and one elsewhere on the process that says it closed it', async () => {
    const exchange = new ScriptedExchange((_question, body) => ({
      answers: [
        { process: 'b:2', body: '{"closed":false}' },
        { process: 'c:3', body: JSON.parse(body).id === 'c1' ? '{"closed":true}' : '{"closed":false}' },
      ],
      notAnswering: ['d:4'],
    }));
    const deployment = streamsAcrossDeployment(directory(['a1']), exchange);
    expect(await deployment.close('a1', null)).toEqual({ closedOn: 'here:1' });
    expect(exchange.asked).toEqual([]);
    expect(await deployment.close('c1', 'ops')).toEqual({ closedOn: 'c:3' });
    expect(exchange.asked).toEqual([{ question: 'streams.close', body: '{"id":"c1","closed_by":"ops"}' }]);
    expect(await deployment.close('gone', 'ops')).toEqual({ closedOn: undefined, notAnswering: ['d:4'] });
  });

  it('says the cluster could not be asked', async () => {
    const exchange = new ScriptedExchange(() => ({ answers: [], unreachable: true }));
    const listed = await streamsAcrossDeployment(directory([]), exchange).list();
    expect(listed).toEqual({ answered: [{ process: 'here:1', streams: [] }], notAnswering: [], clusterUnreachable: true });
  });
});
