import { describe, expect, it } from 'vitest';
import { curlRequest, shellCommands, splitCommands } from '../../support/doc-commands.js';

describe('the docs examples reader', () => {
  it('reads quotes, continuations, comments and separators as a shell does', () => {
    const script = [
      '# a comment',
      `curl -s -X POST localhost:8000/api/v1/notification \\`,
      `  -d '{"a": "it''s",`,
      `  "b": 1}'   # trailing comment`,
      'export X=1; echo "$HOME-${X}" a\\ b && true &',
    ].join('\n');
    const commands = splitCommands('a page', 10, script, { HOME: '/h', X: 'x' });
    expect(commands.map((command) => [command.line, command.words])).toEqual([
      [11, ['curl', '-s', '-X', 'POST', 'localhost:8000/api/v1/notification', '-d', '{"a": "its",\n  "b": 1}']],
      [14, ['export', 'X=1']],
      [14, ['echo', '/h-x', 'a b']],
      [14, ['true']],
    ]);
  });

  it('finds the commands of shell blocks only, with their page lines', () => {
    const markdown = [
      '# Title',
      '```sh',
      'curl -s localhost:8000/health',
      '```',
      '```json',
      '{"curl": 1}',
      '```',
      '```bash',
      '',
      'npm start',
      '```',
    ].join('\n');
    expect(shellCommands('a page', markdown).map((command) => [command.line, command.words])).toEqual([
      [3, ['curl', '-s', 'localhost:8000/health']],
      [10, ['npm', 'start']],
    ]);
  });

  it('turns a curl command into the request curl sends, and refuses options it does not read', () => {
    const [post, stream, unknown] = splitCommands(
      'a page',
      1,
      [
        `curl -s localhost:8000/x -d '{}' -u alice:pw`,
        `curl -N -X POST http://h:1/w -H 'Content-Type: application/json' -d '{}'`,
        'curl -k https://h/',
      ].join('\n'),
    );
    expect(curlRequest(post!)).toEqual({
      method: 'POST',
      url: 'http://localhost:8000/x',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('alice:pw').toString('base64')}`,
      },
      body: '{}',
      streaming: false,
    });
    expect(curlRequest(stream!)).toMatchObject({
      method: 'POST',
      url: 'http://h:1/w',
      headers: { 'content-type': 'application/json' },
      streaming: true,
    });
    expect(() => curlRequest(unknown!)).toThrow('curl option -k is not read by this test');
  });
});
