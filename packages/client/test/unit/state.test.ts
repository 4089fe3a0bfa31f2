import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonFileStore, MemoryStore, resumeKey, normaliseBaseUrl, StateStoreError } from '../../src/internal.js';

describe('resume key', () => {
  it('matches the worked example of the aviso client docs (aviso-server.ecmwf.int, mars, class=od)', async () => {
    // docs/src/resume/state-file.md of ecmwf/aviso-client: this key for that server, event and filter.
    expect(await resumeKey('https://aviso-server.ecmwf.int', 'mars', { class: 'od' })).toBe(
      '46fe3e30937478ae30527c74cb2f03a5e5419228a11051cdaccefe7d044b21c3',
    );
  });
  it('normalises scheme, host, default port and user info, and canonicalises the filter (RFC 8785)', async () => {
    expect(normaliseBaseUrl('HTTPS://user:pw@Aviso-Server.ECMWF.int:443')).toBe('https://aviso-server.ecmwf.int/');
    expect(await resumeKey('HTTPS://Aviso-Server.ecmwf.int:443/', 'mars', { class: 'od' })).toBe(
      '46fe3e30937478ae30527c74cb2f03a5e5419228a11051cdaccefe7d044b21c3',
    );
    expect(await resumeKey('http://h', 'e', { a: '1', b: '2' })).toBe(await resumeKey('http://h', 'e', { b: '2', a: '1' }));
    expect(await resumeKey('http://h', 'e', { a: '1' })).not.toBe(await resumeKey('http://h', 'e', { a: 1 }));
  });
});

describe('MemoryStore', () => {
  it('is monotonic', async () => {
    const store = new MemoryStore();
    await store.put('k', { lastCommittedSequence: 5, lastEventId: 'mars@5' });
    await store.put('k', { lastCommittedSequence: 3, lastEventId: 'mars@3' });
    expect(await store.get('k')).toEqual({ lastCommittedSequence: 5, lastEventId: 'mars@5' });
  });
  it('moves back only by rewind', async () => {
    const store = new MemoryStore();
    await store.put('k', { lastCommittedSequence: 5, lastEventId: 'mars@5' });
    await store.rewind('k', { lastCommittedSequence: 0, lastEventId: null });
    expect(await store.get('k')).toEqual({ lastCommittedSequence: 0, lastEventId: null });
    await store.put('k', { lastCommittedSequence: 2, lastEventId: 'mars@2' });
    expect(await store.get('k')).toEqual({ lastCommittedSequence: 2, lastEventId: 'mars@2' });
  });
});

describe('JsonFileStore', () => {
  const key = '46fe3e30937478ae30527c74cb2f03a5e5419228a11051cdaccefe7d044b21c3';
  const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'aviso-state-')), 'state.json');

  it('reads the aviso client docs example file and writes the same format', async () => {
    const path = fresh();
    const example = {
      version: 1,
      key_format_version: 1,
      checkpoints: { [key]: { last_committed_sequence: 72, last_event_id: 'mars@72' } },
    };
    writeFileSync(path, JSON.stringify(example, null, 2));
    const store = new JsonFileStore(path);
    expect(await store.get(key)).toEqual({ lastCommittedSequence: 72, lastEventId: 'mars@72' });
    await store.put(key, { lastCommittedSequence: 71, lastEventId: 'mars@71' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(example);
    await store.put(key, { lastCommittedSequence: 73, lastEventId: 'mars@73' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      ...example,
      checkpoints: { [key]: { last_committed_sequence: 73, last_event_id: 'mars@73' } },
    });
  });

  it('merges under the lock: concurrent writers on other keys and one key never lose or regress', async () => {
    const path = fresh();
    const a = new JsonFileStore(path);
    const b = new JsonFileStore(path);
    const other = 'a'.repeat(64);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => [
        a.put(key, { lastCommittedSequence: i, lastEventId: `mars@${i}` }),
        b.put(other, { lastCommittedSequence: 100 + i, lastEventId: null }),
      ]).flat(),
    );
    expect(await a.get(key)).toEqual({ lastCommittedSequence: 19, lastEventId: 'mars@19' });
    expect(await a.get(other)).toEqual({ lastCommittedSequence: 119, lastEventId: null });
  });

  it('moves a key back only by rewind, which keeps every other key', async () => {
    const path = fresh();
    const other = 'e'.repeat(64);
    const store = new JsonFileStore(path);
    await store.put(key, { lastCommittedSequence: 72, lastEventId: 'mars@72' });
    await store.put(other, { lastCommittedSequence: 9, lastEventId: 'x@9' });
    await store.rewind(key, { lastCommittedSequence: 0, lastEventId: null });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      version: 1,
      key_format_version: 1,
      checkpoints: {
        [key]: { last_committed_sequence: 0, last_event_id: null },
        [other]: { last_committed_sequence: 9, last_event_id: 'x@9' },
      },
    });
    // Read back by a fresh store (the next run), and monotonic again from there.
    const next = new JsonFileStore(path);
    expect(await next.get(key)).toEqual({ lastCommittedSequence: 0, lastEventId: null });
    await next.put(key, { lastCommittedSequence: 2, lastEventId: 'mars@2' });
    expect(await next.get(key)).toEqual({ lastCommittedSequence: 2, lastEventId: 'mars@2' });
  });

  it('creates nothing until the first put', async () => {
    const store = new JsonFileStore(fresh());
    expect(await store.get(key)).toBeUndefined();
  });

  it('refuses other format versions with the aviso client messages', async () => {
    const path = fresh();
    writeFileSync(path, JSON.stringify({ version: 2, key_format_version: 1, checkpoints: {} }));
    await expect(new JsonFileStore(path).get(key)).rejects.toThrow(
      new StateStoreError('state file format version 2 does not match supported version 1'),
    );
    writeFileSync(path, JSON.stringify({ version: 1, key_format_version: 3, checkpoints: {} }));
    await expect(new JsonFileStore(path).get(key)).rejects.toThrow('state file uses key_format_version 3; this client uses 1 or 2');
  });
});

describe('key_format_version: both recipes the aviso client has written are read, none is discarded', () => {
  const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'aviso-state-')), 'state.json');
  it('computes a different key for each recipe, and refuses an unknown one', async () => {
    const v1 = await resumeKey('https://aviso-server.ecmwf.int', 'mars', { class: 'od' }, 1);
    expect(v1).toBe('46fe3e30937478ae30527c74cb2f03a5e5419228a11051cdaccefe7d044b21c3');
    const v2 = await resumeKey('https://aviso-server.ecmwf.int', 'mars', { class: 'od' }, 2);
    expect(v2).toMatch(/^[0-9a-f]{64}$/);
    expect(v2).not.toBe(v1);
    await expect(resumeKey('https://a', 'mars', {}, 3)).rejects.toThrow(/unknown key_format_version 3/);
  });
  it('a new file gets the released recipe, 1', async () => {
    const path = fresh();
    const store = new JsonFileStore(path);
    expect(await store.keyFormatVersion()).toBe(1);
    await store.put('b'.repeat(64), { lastCommittedSequence: 1, lastEventId: 'mars@1' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ version: 1, key_format_version: 1 });
  });
  it('a file with key_format_version 2 keeps it, with every key already in it', async () => {
    const path = fresh();
    const key2 = await resumeKey('https://a', 'mars', { class: 'od' }, 2);
    const theirs = {
      version: 1,
      key_format_version: 2,
      checkpoints: { ['c'.repeat(64)]: { last_committed_sequence: 9, last_event_id: 'x@9' } },
    };
    writeFileSync(path, JSON.stringify(theirs));
    const store = new JsonFileStore(path);
    expect(await store.keyFormatVersion()).toBe(2);
    await store.put(key2, { lastCommittedSequence: 4, lastEventId: 'mars@4' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      ...theirs,
      checkpoints: { ...theirs.checkpoints, [key2]: { last_committed_sequence: 4, last_event_id: 'mars@4' } },
    });
  });
  it('a file whose recipe changes under a running store is an error, not overwritten', async () => {
    const path = fresh();
    const store = new JsonFileStore(path);
    expect(await store.keyFormatVersion()).toBe(1);
    const theirs = JSON.stringify({ version: 1, key_format_version: 2, checkpoints: {} });
    writeFileSync(path, theirs);
    await expect(store.put('d'.repeat(64), { lastCommittedSequence: 1, lastEventId: null })).rejects.toThrow(
      /now uses key_format_version 2/,
    );
    expect(readFileSync(path, 'utf8')).toBe(theirs);
  });
});
