import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dumpJson, dumpYaml } from '../../src/cli/commands/config-dump.js';
import { UsageError } from '../../src/cli/errors.js';
import { resolveSettings } from '../../src/cli/settings.js';

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'aviso-cli-'));
}

function configFile(yaml: string, at = dir()): string {
  const file = join(at, 'config.yaml');
  writeFileSync(file, yaml);
  return file;
}

describe('settings precedence: flag > environment > config file > default', () => {
  const file = configFile('base_url: http://config.example\nstate_file: /config/state.json\ntimeout: 5s\nheartbeat_interval: 1500ms\n');
  it('takes each field from the highest layer that sets it', () => {
    const s = resolveSettings({ config: file }, { HOME: '/nonexistent-home' });
    expect(s.baseUrl).toEqual({ value: 'http://config.example', source: 'file' });
    expect(s.stateFile).toEqual({ value: '/config/state.json', source: 'file' });
    expect(s.timeoutMs).toEqual({ value: 5000, source: 'file' });
    const e = resolveSettings(
      { config: file },
      { HOME: '/nonexistent-home', AVISO_BASE_URL: 'http://env.example', AVISO_STATE_FILE: '/env/s.json' },
    );
    expect(e.baseUrl.source).toBe('env');
    expect(e.stateFile).toEqual({ value: '/env/s.json', source: 'env' });
    const f = resolveSettings(
      { config: file, baseUrl: 'http://flag.example' },
      { HOME: '/nonexistent-home', AVISO_BASE_URL: 'http://env.example' },
    );
    expect(f.baseUrl).toEqual({ value: 'http://flag.example', source: 'flag' });
  });
  it('finds the config file from the flag, then AVISO_CLIENT_CONFIG_FILE, then ~/.config/aviso', () => {
    expect(resolveSettings({}, { HOME: '/nonexistent-home', AVISO_CLIENT_CONFIG_FILE: file }).baseUrl.value).toBe('http://config.example');
    const d = resolveSettings({}, { HOME: '/nonexistent-home' });
    expect(d.configFile).toEqual({ value: '/nonexistent-home/.config/aviso/config.yaml', source: 'default' });
    expect(d.stateFile).toEqual({ value: '/nonexistent-home/.config/aviso/state.json', source: 'default' });
    expect(d.baseUrl.value).toBeUndefined();
  });
  it('treats a config file that does not exist as empty, even when named (as the aviso client does)', () => {
    const s = resolveSettings({ config: '/nonexistent/c.yaml' }, { HOME: '/nonexistent-home' });
    expect(s.configFile).toEqual({ value: '/nonexistent/c.yaml', source: 'flag' });
    expect(s.listeners).toEqual([]);
    expect(
      resolveSettings({}, { HOME: '/nonexistent-home', AVISO_CLIENT_CONFIG_FILE: '/nonexistent/e.yaml' }).baseUrl.value,
    ).toBeUndefined();
  });
  it('rejects unknown keys at the top and in tls:, but reads auth: only when it is needed', () => {
    expect(() => resolveSettings({ config: configFile('base_url: x\nbase_uri: y\n') }, { HOME: '/x' })).toThrow(/unknown key "base_uri"/);
    expect(() => resolveSettings({ config: configFile('tls:\n  ca_bundel: [a.pem]\n') }, { HOME: '/x' })).toThrow(
      /unknown key "ca_bundel"/,
    );
    const typo = configFile('auth:\n  bearer_tokne: t\n');
    expect(() => resolveSettings({ config: typo }, { HOME: '/x' })).toThrow(/auth: unknown key "bearer_tokne"/);
    expect(resolveSettings({ config: typo }, { HOME: '/x', AVISO_TOKEN: 'env' }).credential?.source).toBe('environment');
  });
});

describe('tls: CA bundles and the insecure switch', () => {
  it('takes a list of files, relative ones next to the config file; one string is a list of one', () => {
    const at = dir();
    const list = resolveSettings(
      { config: configFile('tls:\n  ca_bundle:\n    - internal-ca.pem\n    - /etc/ssl/other.pem\n', at) },
      { HOME: '/x' },
    );
    expect(list.caBundles).toEqual({ value: [join(at, 'internal-ca.pem'), '/etc/ssl/other.pem'], source: 'file' });
    const single = resolveSettings({ config: configFile('tls:\n  ca_bundle: ca.pem\n', at) }, { HOME: '/x' });
    expect(single.caBundles.value).toEqual([join(at, 'ca.pem')]);
  });
  it("--ca-bundle is repeatable, relative to the working directory, and replaces the file's list", () => {
    const file = configFile('tls:\n  ca_bundle: [a.pem]\n');
    const s = resolveSettings({ config: file, caBundle: ['one.pem', '/abs/two.pem'] }, { HOME: '/x' });
    expect(s.caBundles).toEqual({ value: [resolve('one.pem'), '/abs/two.pem'], source: 'flag' });
  });
  it('accepts danger_accept_invalid_certs from the file or the flag, off by default', () => {
    expect(
      resolveSettings({ config: configFile('tls:\n  danger_accept_invalid_certs: true\n') }, { HOME: '/x' }).dangerAcceptInvalidCerts,
    ).toEqual({ value: true, source: 'file' });
    expect(resolveSettings({ dangerAcceptInvalidCerts: true }, { HOME: '/x' }).dangerAcceptInvalidCerts).toEqual({
      value: true,
      source: 'flag',
    });
    expect(resolveSettings({}, { HOME: '/x' }).dangerAcceptInvalidCerts).toEqual({ value: false, source: 'default' });
    expect(() => resolveSettings({ config: configFile('tls:\n  danger_accept_invalid_certs: yes please\n') }, { HOME: '/x' })).toThrow(
      /true or false/,
    );
  });
});

describe('credentials: flags > environment > config file auth: > credentials file', () => {
  const home = dir();
  const credentials = join(home, 'credentials.yaml');
  writeFileSync(credentials, 'bearer:\n  token: from-credentials\n');
  const config = configFile('auth:\n  basic:\n    username: alice\n    password: s3cret\n');
  const env = { HOME: home, AVISO_CREDENTIALS_FILE: credentials };
  it('takes the first place that holds a credential', async () => {
    const flag = resolveSettings({ config, token: 'from-flag' }, { ...env, AVISO_TOKEN: 'from-env' }).credential;
    expect(flag).toMatchObject({ kind: 'bearer', source: 'flag' });
    expect(flag?.provider.discovered).toBe(false);
    expect(await flag?.provider.authorization()).toBe('Bearer from-flag');
    const fromEnv = resolveSettings({ config }, { ...env, AVISO_TOKEN: 'from-env' }).credential;
    expect(fromEnv).toMatchObject({ kind: 'bearer', source: 'environment' });
    const fromConfig = resolveSettings({ config }, env).credential;
    expect(fromConfig).toMatchObject({ kind: 'basic', source: 'config file', path: config, username: 'alice' });
    expect(fromConfig?.provider.discovered).toBe(true);
    const fromFile = resolveSettings({}, env).credential;
    expect(fromFile).toMatchObject({ kind: 'bearer', source: 'credentials file', path: credentials });
    expect(await fromFile?.provider.authorization()).toBe('Bearer from-credentials');
    expect(resolveSettings({}, { HOME: home }).credential).toBeUndefined();
  });
  it('lets a token in the environment beat a user name and password there', async () => {
    const c = resolveSettings({}, { HOME: home, AVISO_TOKEN: 't', AVISO_USERNAME: 'u', AVISO_PASSWORD: 'p' }).credential;
    expect(c).toMatchObject({ kind: 'bearer', source: 'environment' });
    expect(await c?.provider.authorization()).toBe('Bearer t');
    const empty = resolveSettings({}, { HOME: home, AVISO_TOKEN: '', AVISO_USERNAME: 'u', AVISO_PASSWORD: '' }).credential;
    expect(await empty?.provider.authorization()).toBe(`Basic ${btoa('u:')}`);
  });
  it('refuses half a credential instead of falling through to another place', () => {
    expect(() => resolveSettings({}, { HOME: home, AVISO_USERNAME: 'u' })).toThrow(/env auth is misconfigured/);
    expect(() => resolveSettings({ token: 't', username: 'u', password: 'p' }, { HOME: home })).toThrow(UsageError);
    expect(() => resolveSettings({ username: 'u' }, { HOME: home })).toThrow(/go together/);
    expect(() =>
      resolveSettings({ config: configFile('auth:\n  bearer_token: t\n  basic: {username: a, password: b}\n') }, { HOME: home }),
    ).toThrow(/keep one/);
  });
  it('reads the credentials file only when nothing before it has a credential, and reports a broken one', () => {
    const broken = join(dir(), 'credentials.yaml');
    writeFileSync(broken, 'bearer:\n  toke: typo\n');
    expect(() => resolveSettings({}, { HOME: home, AVISO_CREDENTIALS_FILE: broken })).toThrow(/unknown key bearer.toke/);
    expect(resolveSettings({}, { HOME: home, AVISO_CREDENTIALS_FILE: broken, AVISO_TOKEN: 'x' }).credential?.source).toBe('environment');
  });
});

describe('config dump', () => {
  const file = configFile(
    'base_url: https://aviso.example\ntimeout: 1500ms\nauth:\n  bearer_token: from-config\ntls:\n  ca_bundle: [ca.pem]\n',
  );
  const s = resolveSettings({ config: file, stateFile: '/s.json' }, { HOME: '/nonexistent-home' });
  it('is YAML with the source of each value, and never prints a secret', () => {
    const yaml = dumpYaml(s, false);
    expect(yaml).toContain('base_url: https://aviso.example # from: file\n');
    expect(yaml).toContain('state_file: /s.json # from: flag\n');
    expect(yaml).toContain('timeout: 1500ms # from: file\n');
    expect(yaml).toContain(`  ca_bundle: # from: file\n    - ${join(file, '..', 'ca.pem')}\n`);
    // A tls: block in the file is the file's statement for both of its keys, as in the aviso client.
    expect(yaml).toContain('  danger_accept_invalid_certs: false # from: file\n');
    expect(yaml).toContain(`auth:\n  provider: <set>\n  kind: bearer\n  source: config file ${file}\n`);
    expect(yaml).not.toContain('from-config');
    expect(dumpYaml(s, true)).toContain('provider: <set; redacted>');
  });
  it('is one JSON object with value/source pairs for --json', () => {
    const json = dumpJson(s, true);
    expect(json.base_url).toEqual({ value: 'https://aviso.example', source: 'file' });
    expect(json.auth).toMatchObject({
      provider: '<set; redacted>',
      kind: 'bearer',
      source: 'config file',
      provider_set: true,
      redacted: true,
    });
    expect(JSON.stringify(json)).not.toContain('from-config');
  });
});
