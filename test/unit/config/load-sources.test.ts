import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigLoadError, loadConfigWithSources } from '../../../src/config/load.js';
import { MINIMAL_YAML, loadIn, removeSandboxes, sandbox, writeFile } from './config-fixture.js';

afterAll(removeSandboxes);

describe('file cascade (docs/design/rules/operations.md §1.1, D16)', () => {
  it('reads ./config/config.yaml relative to the working directory', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), MINIMAL_YAML);
    expect(loadIn(box).application.port).toBe(8000);
  });

  it('reads the system file and the home file', () => {
    const box = sandbox();
    writeFile(box.systemFile, 'application: { host: "0.0.0.0", port: 1 }\n');
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), 'notification_backend: { kind: jetstream }\n');
    const config = loadIn(box);
    expect(config.application.host).toBe('0.0.0.0');
    expect(config.notification_backend.kind).toBe('jetstream');
  });

  it('merges every existing file in the order cwd, system, home', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), MINIMAL_YAML);
    writeFile(box.systemFile, 'application:\n  port: 8100\n  base_url: "https://system"\n');
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), 'application:\n  port: 8200\n');
    const { config, files } = loadConfigWithSources({ env: {}, cwd: box.cwd, home: box.home, systemFile: box.systemFile });
    expect(config.application).toMatchObject({ host: '127.0.0.1', port: 8200, base_url: 'https://system' });
    expect(files).toEqual([
      path.join(box.cwd, 'config', 'config.yaml'),
      box.systemFile,
      path.join(box.home, '.aviso_server', 'config.yaml'),
    ]);
  });

  it('skips missing files silently', () => {
    const box = sandbox();
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), MINIMAL_YAML);
    const { files } = loadConfigWithSources({ env: {}, cwd: box.cwd, home: box.home, systemFile: box.systemFile });
    expect(files).toEqual([path.join(box.home, '.aviso_server', 'config.yaml')]);
  });

  it('takes $HOME from the environment when no home is given', () => {
    const box = sandbox();
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), MINIMAL_YAML);
    const config = loadConfigWithSources({ env: { HOME: box.home }, cwd: box.cwd, systemFile: box.systemFile }).config;
    expect(config.application.port).toBe(8000);
  });

  it('merges mappings recursively and replaces sequences instead of concatenating them', () => {
    const box = sandbox();
    writeFile(
      path.join(box.cwd, 'config', 'config.yaml'),
      `${MINIMAL_YAML}auth:\n  admin_roles:\n    realm_a: [admin, ops]\n    realm_b: [root]\n`,
    );
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), 'auth:\n  admin_roles:\n    realm_a: [boss]\n');
    expect(loadIn(box).auth.admin_roles).toEqual({ realm_a: ['boss'], realm_b: ['root'] });
  });

  it('lets a later null replace an earlier section, which then takes its defaults', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), `${MINIMAL_YAML}logging: { level: debug }\n`);
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), 'logging: ~\n');
    expect(loadIn(box).logging.level).toBe('info');
  });

  it('fails without any file because required fields are missing', () => {
    const box = sandbox();
    expect(() => loadIn(box)).toThrow('application: required field is missing');
  });

  it('treats an empty file as contributing nothing', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), MINIMAL_YAML);
    writeFile(path.join(box.home, '.aviso_server', 'config.yaml'), '# nothing yet\n');
    expect(loadIn(box).application.port).toBe(8000);
  });

  it('rejects a file whose top level is not a mapping', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.cwd, 'config', 'config.yaml'), '- a\n- b\n');
    expect(() => loadIn(box)).toThrow(`${file}: the top level must be a mapping, got a list`);
  });
});

describe('AVISOSERVER_CONFIG_FILE (A1)', () => {
  it('replaces the cascade: the default locations are not read', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), `${MINIMAL_YAML}logging: { level: debug }\n`);
    writeFile(box.systemFile, 'logging: { level: warn }\n');
    const file = writeFile(path.join(box.root, 'only.yaml'), MINIMAL_YAML);
    const { config, files } = loadConfigWithSources({
      env: { AVISOSERVER_CONFIG_FILE: file },
      cwd: box.cwd,
      home: box.home,
      systemFile: box.systemFile,
    });
    expect(files).toEqual([file]);
    expect(config.logging.level).toBe('info');
  });

  it('is trimmed', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'only.yaml'), MINIMAL_YAML);
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: `  ${file}\n` }).application.port).toBe(8000);
  });

  it('resolves a relative path against the working directory', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'custom', 'aviso.yaml'), MINIMAL_YAML);
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: 'custom/aviso.yaml' }).application.port).toBe(8000);
  });

  it('still lets environment overrides apply on top', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'only.yaml'), MINIMAL_YAML);
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: file, AVISOSERVER_APPLICATION__PORT: '9001' }).application.port).toBe(9001);
  });

  it.each(['', '   '])('rejects a blank value %j, saying the variable is empty', (value) => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config', 'config.yaml'), MINIMAL_YAML);
    expect(() => loadIn(box, { AVISOSERVER_CONFIG_FILE: value })).toThrow(new ConfigLoadError('AVISOSERVER_CONFIG_FILE is set but empty'));
  });

  it('rejects a path that does not exist, quoting it', () => {
    const box = sandbox();
    const missing = path.join(box.root, 'nope.yaml');
    expect(() => loadIn(box, { AVISOSERVER_CONFIG_FILE: missing })).toThrow(
      `AVISOSERVER_CONFIG_FILE: '${missing}' is not an existing regular file`,
    );
  });

  it('rejects a directory', () => {
    const box = sandbox();
    expect(() => loadIn(box, { AVISOSERVER_CONFIG_FILE: box.home })).toThrow(`'${box.home}' is not an existing regular file`);
  });
});

describe('file formats', () => {
  it('parses *.json as JSON', () => {
    const box = sandbox();
    const file = writeFile(
      path.join(box.root, 'config.JSON'),
      JSON.stringify({ application: { host: 'h', port: 8000 }, notification_backend: { kind: 'in_memory' } }),
    );
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: file }).application.host).toBe('h');
  });

  it('reports invalid JSON with the file name', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'config.json'), '{"application": ');
    expect(() => loadIn(box, { AVISOSERVER_CONFIG_FILE: file })).toThrow(`${file}: invalid JSON:`);
  });

  it('parses any other extension as YAML', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'config.conf'), MINIMAL_YAML);
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: file }).application.port).toBe(8000);
  });

  it('reports a YAML syntax error on one line with the file and position (A2)', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'config.yaml'), 'application:\n  host: [a, b\n  port: 8000\n');
    let message = '';
    try {
      loadIn(box, { AVISOSERVER_CONFIG_FILE: file });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigLoadError);
      message = (error as Error).message;
    }
    expect(message).toContain(`${file}: YAML syntax error:`);
    expect(message).toMatch(/line \d+, column \d+/);
    expect(message).not.toContain('\n');
  });

  it('rejects duplicate keys as a YAML error', () => {
    const box = sandbox();
    const file = writeFile(path.join(box.root, 'config.yaml'), `${MINIMAL_YAML}application: {}\n`);
    expect(() => loadIn(box, { AVISOSERVER_CONFIG_FILE: file })).toThrow('Map keys must be unique');
  });

  it('reads JSON written in a .yaml file (JSON is YAML)', () => {
    const box = sandbox();
    const file = writeFile(
      path.join(box.root, 'config.yaml'),
      JSON.stringify({ application: { host: 'h', port: 8000 }, notification_backend: { kind: 'in_memory' } }),
    );
    expect(loadIn(box, { AVISOSERVER_CONFIG_FILE: file }).notification_backend.kind).toBe('in_memory');
  });

  it('does not read anything but the files it is told about', () => {
    const box = sandbox();
    writeFile(path.join(box.cwd, 'config.yaml'), MINIMAL_YAML); // not ./config/config.yaml
    expect(fs.existsSync(path.join(box.cwd, 'config', 'config.yaml'))).toBe(false);
    expect(() => loadIn(box)).toThrow(ConfigLoadError);
  });
});
