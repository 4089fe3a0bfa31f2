import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { dumpSettings, resolveSettings } from '../../src/cli/settings.js';

function configFile(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'aviso-cli-')), 'config.yaml');
  writeFileSync(file, yaml);
  return file;
}

describe('settings precedence: flag > environment > config file > default', () => {
  const file = configFile('base_url: http://config.example\nauth:\n  bearer_token: from-config\nstate_file: /config/state.json\ntimeout: 5s\n');
  it('takes each field from the highest layer that sets it', () => {
    const s = resolveSettings({ config: file }, { HOME: '/home/u' });
    expect(s.baseUrl).toEqual({ value: 'http://config.example', source: 'config' });
    expect(s.stateFile).toEqual({ value: '/config/state.json', source: 'config' });
    expect(s.credential).toEqual({ value: { kind: 'bearer', token: 'from-config' }, source: 'config' });
    expect(s.timeoutMs.value).toBe(5000);
    const e = resolveSettings({ config: file }, { HOME: '/home/u', AVISO_BASE_URL: 'http://env.example', AVISO_STATE_FILE: '/env/s.json' });
    expect(e.baseUrl.source).toBe('env');
    expect(e.stateFile).toEqual({ value: '/env/s.json', source: 'env' });
    expect(e.credential.source).toBe('config');
    const f = resolveSettings({ config: file, baseUrl: 'http://flag.example', username: 'a', password: 'b' }, { AVISO_BASE_URL: 'http://env.example' });
    expect(f.baseUrl).toEqual({ value: 'http://flag.example', source: 'flag' });
    expect(f.credential).toEqual({ value: { kind: 'basic', username: 'a', password: 'b' }, source: 'flag' });
  });
  it('finds the config file from the flag, then AVISO_CLIENT_CONFIG_FILE, then ~/.config/aviso', () => {
    expect(resolveSettings({}, { AVISO_CLIENT_CONFIG_FILE: file }).baseUrl.value).toBe('http://config.example');
    const d = resolveSettings({}, { HOME: '/nonexistent-home' });
    expect(d.configFile).toEqual({ value: '/nonexistent-home/.config/aviso/config.yaml', source: 'default' });
    expect(d.stateFile).toEqual({ value: '/nonexistent-home/.config/aviso/state.json', source: 'default' });
    expect(d.baseUrl.value).toBeUndefined();
  });
  it('rejects a missing named config file, unknown keys and mixed credentials', () => {
    expect(() => resolveSettings({ config: '/nonexistent/c.yaml' }, {})).toThrow(UsageError);
    expect(() => resolveSettings({ config: configFile('base_url: x\nbase_uri: y\n') }, {})).toThrow(/unknown key "base_uri"/);
    expect(() => resolveSettings({ token: 't', username: 'u', password: 'p' }, { HOME: '/x' })).toThrow(/mutually exclusive/);
    expect(() => resolveSettings({ username: 'u' }, { HOME: '/x' })).toThrow(/needs a password/);
  });
  it('dumps with sources and masks secrets with --redact', () => {
    const s = resolveSettings({ config: file }, {});
    expect(dumpSettings(s, false).auth).toEqual({ value: { bearer_token: 'from-config' }, source: 'config' });
    expect(JSON.stringify(dumpSettings(s, true))).not.toContain('from-config');
  });
});
